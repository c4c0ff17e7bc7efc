"""The command-line client run as a real process against the in-process stack: the answer on
stdout, the web UI's progress wording on stderr, follow-ups in the same chat, folder ingestion
with a progress bar (uploads, then waiting for every document to be ready), and the server's
messages on failure; every line of its own in one language, Chinese unless ``--lang`` or the
locale says English, and the gateway's refusals in that language too."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from cli.ask import AnswerState, handle_frame
from cli.ingest import ProgressBar
from cli.language import LOCALE_VARIABLES
from cli.words import CliWords
from gateway.labels import STOP_REASON_LABELS
from kbcore.sse_decoder import SseParser
from tests.document_jobs import wait_for_documents
from tests.fixtures import documents
from tests.harness import Stack
from tests.page_words import CJK, english_words
from tools.seed_demo import DEMO_APPLICATION_ID

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = REPO / "samples" / "kb" / "questions.jsonl"
UNKNOWN = "00000000-0000-0000-0000-000000000000"
COMPOUND = "云岭县人民医院ICU每天的探视时间是几点到几点？城乡居民医保参保人在县级定点医院住院，报销比例是多少？"
ICU = "云岭县人民医院ICU每天的探视时间是几点到几点？"
INSURANCE = "城乡居民医保参保人在县级定点医院住院，报销比例是多少？"
CHINESE, ENGLISH = CliWords("zh"), CliWords("en")
OPTION = re.compile(r"--[a-z][a-z-]*")


async def run_cli(stack: Stack, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """In a thread: the stack serves from this test's event loop, which a blocking wait would stall.
    The client runs as on the stack's machine: KB_DATA_DIR is the stack's, so it presents the
    local operator token (``$KB_DATA_DIR/operator.token``) unless ``settings`` say otherwise. No
    locale unless ``settings`` set one: the CLI speaks its default, whatever the test runner's is."""
    dropped = {*LOCALE_VARIABLES, "LANGUAGE"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_") and k not in dropped}
    env.update({"PYTHONIOENCODING": "utf-8", "KB_DATA_DIR": str(stack.settings.data_dir), **settings})
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "cli", "--url", stack.url, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=REPO,
        env=env,
        timeout=120,
    )


def chat_id_from(stderr: str) -> str:
    """The id the opened-chat line tells a follow-up to pass with --chat."""
    found = re.search(r"--chat ([0-9a-f-]+)", stderr)
    assert found, stderr
    return found.group(1)


def trace_part(stdout: str, words: CliWords) -> list[str]:
    """The lines ``--trace`` prints after the answer: the CLI's own, around the record's content."""
    heading = words("ask.trace_heading")
    assert heading in stdout, stdout
    return stdout.split(heading, 1)[1].splitlines()


def with_cjk(lines: list[str]) -> list[str]:
    return [line for line in lines if CJK.search(line)]


def with_english(lines: list[str]) -> list[str]:
    """Lines holding an English word that is not an allowed name, an identifier or an option."""
    return [line for line in lines if english_words(OPTION.sub(" ", line))]


async def test_ask_streams_the_answer_to_stdout_and_progress_to_stderr(stack: Stack) -> None:
    result = await run_cli(stack, "ask", DEMO_APPLICATION_ID, COMPOUND)
    assert result.returncode == 0, result.stderr
    assert "16:00" in result.stdout
    assert "第 1 轮检索" in result.stderr and "正在读取会话上下文…" in result.stderr
    assert "正在根据检索资料生成回答…" in result.stderr
    assert "第 1 轮检索" not in result.stdout, "progress never mixes into the answer"
    assert chat_id_from(result.stderr)


async def test_trace_prints_the_rounds_and_the_stop_reason_label(stack: Stack) -> None:
    result = await run_cli(stack, "ask", DEMO_APPLICATION_ID, COMPOUND, "--trace")
    assert result.returncode == 0, result.stderr
    assert "第 1 轮 · 查询：" in result.stdout and "新增资料" in result.stdout
    assert any(f"停止原因：{label}" in result.stdout for label in STOP_REASON_LABELS.values()), result.stdout
    assert "引用文档：" in result.stdout and "云岭县人民医院" in result.stdout


async def test_a_follow_up_with_chat_continues_the_same_chat(stack: Stack) -> None:
    first = await run_cli(stack, "ask", DEMO_APPLICATION_ID, ICU)
    assert first.returncode == 0, first.stderr
    chat_id = chat_id_from(first.stderr)
    second = await run_cli(stack, "ask", DEMO_APPLICATION_ID, "节假日呢？", "--chat", chat_id)
    assert second.returncode == 0, second.stderr
    assert "--chat" not in second.stderr, "no new chat is opened for a follow-up"
    async with stack.http() as client:
        records = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/20")
    assert records.json()["data"]["total"] == 2


async def test_ingest_uploads_the_folder_waits_reports_the_failures_and_exits_1(
    stack: Stack, tmp_path: Path, unique: str
) -> None:
    """A refused upload (415) and a failed job (a scanned PDF) are both reported with the
    server's own words; the other documents are waited for until ready."""
    (tmp_path / "a-rules.md").write_text(f"# 测试规定{unique}\n\n第一条 本规定适用于测试单位。\n", encoding="utf-8")
    (tmp_path / "b-scan.pdf").write_bytes(documents.scanned_pdf())
    (tmp_path / "c-notes.md").write_text(f"# 测试说明{unique}\n\n会议每周二上午九点召开。\n", encoding="utf-8")
    (tmp_path / "d-photo.png").write_bytes(b"\x89PNG")
    name = f"cli-{unique}"
    result = await run_cli(stack, "ingest", "--create", name, str(tmp_path), "--pattern", "*")
    assert result.returncode == 1, result.stderr
    assert "2/4 b-scan.pdf" in result.stderr and "4/4 d-photo.png  失败：HTTP 415：" in result.stderr
    assert "支持的类型" in result.stderr, "the server's own message, in the CLI's language, names the problem"
    failed_job = next(line for line in result.stderr.splitlines() if "b-scan" in line and "失败：" in line)
    assert failed_job.split("失败：", 1)[1].strip(), "the job's error text is shown"
    assert "2 个文档" in result.stdout and "2 个失败：" in result.stdout and "d-photo.png" in result.stdout
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        dataset_id = next(d["id"] for d in datasets if d["name"] == name)
        listed = (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]
    ready = sorted(d["name"] for d in listed if d["status"] == "ready")
    assert ready == [f"测试规定{unique}", f"测试说明{unique}"]
    assert all(d["paragraph_count"] > 0 for d in listed if d["status"] == "ready")
    assert [d["status"] for d in listed if d["source_type"] == "pdf"] == ["failed"]


async def test_preview_then_ingest_with_the_same_rules_makes_the_previewed_paragraphs(
    stack: Stack, tmp_path: Path, unique: str
) -> None:
    source = tmp_path / "leave.md"
    source.write_bytes((REPO / "samples" / "kb" / "docs" / "xinglan_leave_policy.md").read_bytes())
    rules = ("--max-length", "60", "--separator", "。", "--separator", "§§", "--overlap", "5")
    previewed = await run_cli(stack, "preview", str(source), *rules)
    assert previewed.returncode == 0, previewed.stderr
    blocks = [b for b in previewed.stdout.strip().split("\n\n") if b]
    assert f"共 {len(blocks)} 个段落" in previewed.stderr
    assert "分隔符 '§§' 在 leave.md 中没有切分任何内容" in previewed.stderr
    name = f"cli-split-{unique}"
    ingested = await run_cli(stack, "ingest", "--create", name, str(source), *rules)
    assert ingested.returncode == 0, ingested.stderr
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        dataset_id = next(d["id"] for d in datasets if d["name"] == name)
        [document] = (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]
        records = (await client.get(f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph/1/200")).json()
    shown = [block.split("\n", 1)[1] for block in blocks]
    assert [p["content"] for p in records["data"]["records"]] == shown
    refused = await run_cli(stack, "preview", str(source), "--max-length", "0")
    assert refused.returncode == 1 and "max_length 须在 50 到 10000 个字符之间" in refused.stderr


async def test_ingest_takes_office_files_and_a_zip_and_waits_until_ready(
    stack: Stack, tmp_path: Path, unique: str
) -> None:
    (tmp_path / "manual.docx").write_bytes(documents.docx_with_headings_and_table())
    (tmp_path / "prices.xlsx").write_bytes(documents.xlsx_price_list())
    notes = {f"notes/{i}.md": f"# 笔记{i}{unique}\n\n第{i}条笔记的内容。\n".encode() for i in range(2)}
    (tmp_path / "notes.zip").write_bytes(documents.zip_of(notes))
    name = f"cli-office-{unique}"
    result = await run_cli(stack, "ingest", "--create", name, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "3/3 prices.xlsx" in result.stderr, "the upload bar, one line per file"
    assert "4/4 " in result.stderr and "已就绪" in result.stderr, "then the wait bar, one line per document"
    assert "4 个文档，" in result.stdout and "失败" not in result.stdout
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        dataset_id = next(d["id"] for d in datasets if d["name"] == name)
        listed = (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]
    assert sorted(d["source_type"] for d in listed) == ["docx", "md", "md", "xlsx"]
    assert all(d["status"] == "ready" for d in listed)


async def test_ingest_no_wait_returns_once_uploaded(stack: Stack, tmp_path: Path, unique: str) -> None:
    (tmp_path / "one.txt").write_text(f"不等待的文档{unique}。\n", encoding="utf-8")
    async with stack.http() as client:
        created = await client.post("/api/dataset", json={"name": f"cli-nowait-{unique}", "desc": ""})
        dataset_id = created.json()["data"]["id"]
        result = await run_cli(stack, "ingest", dataset_id, str(tmp_path / "one.txt"), "--no-wait")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"知识库 {dataset_id}：1 个文档已排队"
        [document] = await wait_for_documents(client, dataset_id)
    assert document["status"] == "ready"


async def test_ingest_without_a_pattern_sends_only_documents(stack: Stack, tmp_path: Path, unique: str) -> None:
    (tmp_path / "only.txt").write_text(f"唯一的文档{unique}。\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    async with stack.http() as client:
        created = await client.post("/api/dataset", json={"name": f"cli-txt-{unique}", "desc": ""})
    dataset_id = created.json()["data"]["id"]
    result = await run_cli(stack, "ingest", dataset_id, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "1/1 only.txt" in result.stderr and "png" not in result.stderr
    assert f"知识库 {dataset_id}：1 个文档，" in result.stdout


async def test_unknown_application_exits_1_with_the_server_message(stack: Stack) -> None:
    async with stack.http(headers={"Accept-Language": "zh"}) as client:
        expected = (await client.get(f"/api/application/{UNKNOWN}/chat/open")).json()["message"]
    assert CJK.search(expected), "the gateway's Chinese, as the CLI asks for it"
    result = await run_cli(stack, "ask", UNKNOWN, "年假有几天？")
    assert result.returncode == 1
    assert result.stderr == f"错误：HTTP 404：{expected}\n"
    assert result.stdout == ""


async def test_kb_token_is_presented_before_the_local_operator_token_and_a_401_says_how_to_get_one(
    stack: Stack,
) -> None:
    """The stack's operator.token is readable here, yet KB_TOKEN is what goes: a key nobody
    issued is refused, and the person is told where to make a personal token."""
    result = await run_cli(stack, "ask", DEMO_APPLICATION_ID, ICU, KB_TOKEN="application-" + "0" * 32)
    assert result.returncode == 1 and result.stdout == ""
    assert "HTTP 401" in result.stderr
    assert f"{stack.url}/ui/admin" in result.stderr and "用户 → 个人令牌" in result.stderr
    assert "把 KB_TOKEN 设为它" in result.stderr


async def test_with_no_token_anywhere_nothing_is_presented_and_the_401_says_what_to_do(
    stack: Stack, tmp_path: Path
) -> None:
    """Another data folder, no KB_TOKEN: no operator.token to read, so no Authorization header;
    a loopback caller with none is nobody."""
    (tmp_path / "one.md").write_text("# 一\n\n内容。\n", encoding="utf-8")
    result = await run_cli(stack, "ingest", "--create", "never", str(tmp_path), KB_DATA_DIR=str(tmp_path))
    assert result.returncode == 1
    assert "HTTP 401" in result.stderr and "用户 → 个人令牌" in result.stderr and "KB_TOKEN" in result.stderr
    assert not (tmp_path / "operator.token").exists(), "the client never creates the operator token"


async def test_usage_errors_exit_2(stack: Stack) -> None:
    result = await run_cli(stack, "ingest", "some-dataset", ".", "--create", "both")
    assert result.returncode == 2
    assert "either a DATASET_ID or --create" in result.stderr


def test_sse_frames_survive_any_chunking() -> None:
    """Every split point, including inside CRLFs and inside multi-byte characters."""
    stream = (
        ": keep-alive\r\n\r\n"
        'event:agent_status\r\ndata:{"phase":"retrieving","round":2,"query":"探视时间"}\r\n\r\n'
        'data:{"chat_id":"c","chat_record_id":"7","content":"第四条 16:00至16:30","is_end":false}\n\n'
        'data: {"chat_id":"c","chat_record_id":"7","content":"","is_end":true}\n\n'
    ).encode()
    for size in range(1, 12):
        parser = SseParser()
        out, err, state = io.StringIO(), io.StringIO(), AnswerState()
        for start in range(0, len(stream), size):
            for frame in parser.feed(stream[start : start + size]):
                handle_frame(frame, state, out, err, CHINESE)
        assert parser.close() == []
        assert out.getvalue() == "第四条 16:00至16:30", size
        assert err.getvalue() == "第 2 轮检索：探视时间\n", size
        assert state.ended and state.record_id == "7"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_failures_stay_above_it() -> None:
    screen = Terminal()
    bar = ProgressBar(2, screen, ENGLISH)
    bar.starting(0, "a.md")
    bar.finished(1, "a.md")
    bar.starting(1, "b.pdf")
    bar.finished(2, "b.pdf", "HTTP 400: unsupported file type")
    text = screen.getvalue()
    assert text.count("\n") == 2, "one line for the failure, one to end the bar"
    assert "\r\x1b[Kb.pdf failed: HTTP 400: unsupported file type\n" in text
    assert text.endswith("\r[####################] 2/2 b.pdf\x1b[K\n")


async def test_eval_prints_recall_per_round_for_a_questions_file(stack: Stack, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    compound = [line for line in QUESTIONS.read_text().splitlines() if '"kind": "compound"' in line][:4]
    questions.write_text("\n".join(compound) + "\n\n")
    result = await run_cli(stack, "eval", DEMO_APPLICATION_ID, str(questions))
    assert result.returncode == 0, result.stderr
    assert "4 个问题" in result.stdout and "问题改写：开启" in result.stdout
    assert "轮次 | 召回率" in result.stdout
    assert result.stdout.count("\n1 | ") == 1, "a row for round 1"
    assert "停止原因：" in result.stdout


async def test_eval_names_the_line_that_is_not_json(stack: Stack, tmp_path: Path) -> None:
    questions = tmp_path / "broken.jsonl"
    questions.write_text('{"turns": [{"question": "年假", "gold": [{"must_contain": "年假"}]}]}\n{oops\n')
    result = await run_cli(stack, "eval", DEMO_APPLICATION_ID, str(questions))
    assert result.returncode == 1
    assert f"错误：{questions}:2：第 2 列起不是有效的 JSON" in result.stderr
    assert result.stdout == ""


async def test_by_default_every_line_of_its_own_is_chinese(stack: Stack, tmp_path: Path, unique: str) -> None:
    """No locale, no --lang: progress, the chat line, the trace and the ingest summary are all
    Chinese; the English left is names (PDF, JSON…), identifiers, ids and option names."""
    asked = await run_cli(stack, "ask", DEMO_APPLICATION_ID, INSURANCE, "--trace")
    assert asked.returncode == 0, asked.stderr
    own = [*asked.stderr.splitlines(), *trace_part(asked.stdout, CHINESE)]
    assert with_english(own) == [], own
    assert "停止原因：" in asked.stdout and "引用文档：" in asked.stdout and "追问请加 --chat" in asked.stderr
    (tmp_path / "rules.md").write_text(f"# 默认语言{unique}\n\n第一条 本规定适用于测试单位。\n", encoding="utf-8")
    ingested = await run_cli(stack, "ingest", "--create", f"cli-zh-{unique}", str(tmp_path))
    assert ingested.returncode == 0, ingested.stderr
    assert with_english([*ingested.stderr.splitlines(), *ingested.stdout.splitlines()]) == []
    assert "已创建知识库" in ingested.stderr and "1 个文档，" in ingested.stdout


async def test_in_english_no_line_of_its_own_has_a_cjk_character(stack: Stack, tmp_path: Path, unique: str) -> None:
    """``--lang en`` (before the subcommand, and after it): an English document in a new dataset,
    a file the gateway refuses (its refusal in English too), then a question to an application
    over that dataset. Only the answer's text (the offline model opens it with a Chinese notice)
    is left out of the check: it is the answer, not the CLI's words."""
    (tmp_path / "visiting-hours.md").write_text(
        f"# Ward visiting hours {unique}\n\nVisitors may come to the ward every day from 15:00 to 20:00.\n",
        encoding="utf-8",
    )
    (tmp_path / "photo.png").write_bytes(b"\x89PNG")
    name = f"cli-en-{unique}"
    ingested = await run_cli(stack, "--lang", "en", "ingest", "--create", name, str(tmp_path), "--pattern", "*")
    assert ingested.returncode == 1, ingested.stderr
    assert with_cjk([*ingested.stderr.splitlines(), *ingested.stdout.splitlines()]) == []
    assert "created dataset " in ingested.stderr and "photo.png  failed: HTTP 415: " in ingested.stderr
    assert "supported types" in ingested.stderr, "the gateway's refusal, in English as asked"
    assert ", 1 document, " not in ingested.stdout and ": 1 document, " in ingested.stdout
    assert "; 1 failed: photo.png" in ingested.stdout
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        dataset_id = next(d["id"] for d in datasets if d["name"] == name)
        created = await client.post("/api/application", json={"name": name, "dataset_id_list": [dataset_id]})
    app_id = created.json()["data"]["id"]
    asked = await run_cli(stack, "ask", app_id, "When may visitors come to the ward?", "--trace", "--lang", "en")
    assert asked.returncode == 0, asked.stderr
    assert with_cjk([*asked.stderr.splitlines(), *trace_part(asked.stdout, ENGLISH)]) == []
    assert "Search round 1: " in asked.stderr and "chat: " in asked.stderr
    assert "Why it stopped: " in asked.stdout and f"Ward visiting hours {unique} (" in asked.stdout


async def test_the_locale_chooses_the_language_and_the_gateway_refuses_in_it(stack: Stack) -> None:
    """LANG=en_US.UTF-8 is English, the gateway's refusal included; LC_ALL wins over LANG."""
    async with stack.http(headers={"Accept-Language": "en"}) as client:
        english = (await client.get(f"/api/application/{UNKNOWN}/chat/open")).json()["message"]
    async with stack.http(headers={"Accept-Language": "zh"}) as client:
        chinese = (await client.get(f"/api/application/{UNKNOWN}/chat/open")).json()["message"]
    assert english != chinese
    result = await run_cli(stack, "ask", UNKNOWN, "How many days of leave?", LANG="en_US.UTF-8")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"error: HTTP 404: {english}\n"
    assert not CJK.search(result.stderr)
    overruled = await run_cli(stack, "ask", UNKNOWN, "年假有几天？", LANG="en_US.UTF-8", LC_ALL="zh_CN.UTF-8")
    assert overruled.stderr == f"错误：HTTP 404：{chinese}\n"


async def test_in_english_the_evaluation_table_and_a_bad_line_are_english(stack: Stack, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    compound = [line for line in QUESTIONS.read_text().splitlines() if '"kind": "compound"' in line][:2]
    questions.write_text("\n".join(compound) + "\n")
    result = await run_cli(stack, "eval", DEMO_APPLICATION_ID, str(questions), "--lang", "en")
    assert result.returncode == 0, result.stderr
    assert with_cjk(result.stdout.splitlines()) == [], "the cases are named by their ids"
    assert result.stdout.startswith("2 questions, ") and "rewriting on" in result.stdout
    assert "after round | recall" in result.stdout and "stop reasons: " in result.stdout
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{oops\n")
    refused = await run_cli(stack, "eval", DEMO_APPLICATION_ID, str(broken), "--lang", "en")
    assert refused.returncode == 1 and refused.stderr == f"error: {broken}:1: not JSON (from column 2)\n"
