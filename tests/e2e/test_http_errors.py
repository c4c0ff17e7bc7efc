"""Bad input over HTTP: MaxKB's JSON envelope with the matching status, naming the field."""

from __future__ import annotations

from tests.harness import READS_ENGLISH, Stack
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

UNKNOWN = "00000000-0000-0000-0000-000000000000"


def assert_envelope(response, status: int, *fragments: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and body["data"] is None
    for fragment in fragments:
        assert fragment in body["message"], body["message"]


async def test_chat_message_errors_have_their_status_before_any_stream(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        url = f"/api/application/chat_message/{chat_id}"
        assert_envelope(await client.post(url, json={"message": "   "}), 400, "message must not be empty")
        assert_envelope(await client.post(url, json={"message": "问" * 9000}), 413, "4000")
        assert_envelope(await client.post(url, json={"message": 42}), 400, "body.message")
        assert_envelope(await client.post(url, json={}), 400, "body.message", "required")
        assert_envelope(await client.post(url, json={"message": "年假", "re_chat": "often"}), 400, "body.re_chat")
        assert_envelope(
            await client.post(url, content=b'{"message": ', headers={"content-type": "application/json"}), 400, "JSON"
        )
        assert_envelope(
            await client.post(f"/api/application/chat_message/{UNKNOWN}", json={"message": "年假"}), 404, UNKNOWN
        )
        records = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/20")
        assert records.json()["data"]["total"] == 0, "refused questions leave no record"


async def test_admin_routes_validate_and_report_unknown_ids(stack: Stack) -> None:
    async with stack.http() as client:
        assert_envelope(await client.post("/api/dataset", json={"name": ""}), 400, "body.name")
        assert_envelope(await client.get(f"/api/dataset/{UNKNOWN}/document"), 404, UNKNOWN)
        assert_envelope(await client.delete(f"/api/dataset/{UNKNOWN}"), 404)
        hit = f"/api/dataset/{DEMO_DATASET_ID}/hit_test"
        assert_envelope(await client.get(hit, params={"query_text": "年假", "top_number": 0}), 400, "top_number")
        assert_envelope(
            await client.get(hit, params={"query_text": "年假", "search_mode": "magic"}), 400, "search_mode"
        )
        assert_envelope(await client.get(hit), 400, "query_text")
        upload = await client.post(
            f"/api/dataset/{DEMO_DATASET_ID}/document",
            files={"file": ("slides.key", b"PK\x03\x04", "application/octet-stream")},
        )
        assert_envelope(upload, 415, "slides.key", "supported types")
        damaged = await client.post(
            f"/api/dataset/{DEMO_DATASET_ID}/document",
            files={"file": ("slides.pptx", b"PK\x03\x04", "application/octet-stream")},
        )
        assert_envelope(damaged, 400, "damaged")
        assert_envelope(
            await client.post(f"/api/dataset/{DEMO_DATASET_ID}/document", json={"name": "x"}), 400, "paragraphs"
        )
        assert_envelope(await client.get(f"/api/application/{UNKNOWN}"), 404)
        assert_envelope(await client.get(f"/api/application/{UNKNOWN}/chat/open"), 404)
        assert_envelope(
            await client.post("/api/application", json={"name": "x", "dataset_id_list": [UNKNOWN]}), 404, UNKNOWN
        )
        assert_envelope(
            await client.post("/api/application", json={"name": "x", "dataset_setting": {"top_n": 0}}), 400, "top_n"
        )
        assert_envelope(
            await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{UNKNOWN}/chat_record/1"), 404, UNKNOWN
        )
        assert_envelope(await client.get("/api/no/such/route"), 404)


async def test_operator_token_is_required_when_configured(stack: Stack) -> None:
    import dataclasses

    from gateway.app import create_app
    from gateway.backends import Backends

    settings = dataclasses.replace(stack.settings, admin_token="s3cret")
    import httpx

    app = create_app(settings, Backends.connect(settings))
    transport = httpx.ASGITransport(app=app)
    # 127.0.0.1: a Host name this gateway answers
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=READS_ENGLISH) as client:
        assert_envelope(await client.get("/api/dataset"), 401, "token")
        assert_envelope(await client.get("/api/dataset", headers={"Authorization": "Bearer wrong"}), 401)
        ok = await client.get("/api/dataset", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and any(d["id"] == DEMO_DATASET_ID for d in ok.json()["data"])
    await app.state.backends.close()


async def test_a_loopback_caller_without_a_token_is_nobody(stack: Stack) -> None:
    """No operator by address (docs/access.md): the stack's gateway has no KB_ADMIN_TOKEN and
    this caller is on loopback, yet with no credentials it may only do what anyone may."""
    async with stack.http(anonymous=True) as nobody:
        assert_envelope(await nobody.get("/api/dataset"), 401, "token")
        assert_envelope(await nobody.get("/api/application"), 401, "token")
        assert_envelope(await nobody.post(f"/api/application/{DEMO_APPLICATION_ID}/api_key"), 401, "token")
        assert_envelope(await nobody.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open"), 401, "token")
        assert (await nobody.get("/api/profile")).status_code == 200, "what anyone may still answers"


async def test_the_development_switch_makes_only_a_tokenless_loopback_caller_the_operator(stack: Stack) -> None:
    import dataclasses

    import httpx

    from gateway.app import create_app
    from gateway.backends import Backends

    settings = dataclasses.replace(stack.settings, dev_loopback_operator=True)
    app = create_app(settings, Backends.connect(settings))

    async def status(client_host: str, headers: dict[str, str]) -> int:
        transport = httpx.ASGITransport(app=app, client=(client_host, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=READS_ENGLISH) as client:
            return (await client.get("/api/dataset", headers=headers)).status_code

    try:
        assert await status("127.0.0.1", {}) == 200
        assert await status("203.0.113.9", {}) == 401, "only loopback"
        assert await status("127.0.0.1", {"Authorization": "Bearer nobody-issued-this"}) == 401, "a header is judged"
    finally:
        await app.state.backends.close()


async def test_openapi_is_served(stack: Stack) -> None:
    async with stack.http() as client:
        spec = (await client.get("/openapi.json")).json()
        assert "/api/application/chat_message/{chat_id}" in spec["paths"]
        assert "/api/dataset/{dataset_id}/hit_test" in spec["paths"]
