"""``python -m gateway.cli``: ask an application and load a folder of documents from a terminal.

It speaks only the public HTTP API (the routes a browser uses), so it works against any
deployment: the answer goes to stdout as it streams, progress and errors go to stderr.
Exit codes: 0 done, 1 the gateway or a file failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import httpx

from gateway.cli_eval import run_eval
from gateway.cli_http import CliError, default_url, error_message, make_client, request_data
from kbcore.rpc import STOP_REASON_LABELS
from kbcore.settings import SettingsError
from kbcore.sse import SseFrame, SseParser

BAR_WIDTH = 20
DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")  # what the retrieval service can split


# --- ask ----------------------------------------------------------------------------------


def progress_line(status: dict[str, Any]) -> str | None:
    """The web UI's wording for one agent_status frame; an unknown phase is skipped, so a newer
    gateway does not break an older client."""
    phase = status.get("phase")
    if phase == "context":
        return "正在读取会话上下文…"
    if phase == "compacting":
        return "Compacting context · 上下文 token 超出预算，正在压缩…"
    if phase == "retrieving":
        return f"第 {status.get('round', '?')} 轮检索：{status.get('query', '')}"
    if phase == "assessed":
        if status.get("sufficient"):
            return "资料已充分，准备回答…"
        missing = status.get("missing") or ""
        return f"继续查找资料：{missing}" if missing else "继续查找资料…"
    if phase == "generating":
        return "正在根据检索资料生成回答…"
    return None


@dataclass
class AnswerState:
    """What the stream has told us so far: whether it ended and which record holds the answer."""

    record_id: str = ""
    ended: bool = False
    wrote: bool = False
    at_line_start: bool = True


def load_json(frame: SseFrame) -> dict[str, Any]:
    try:
        payload = json.loads(frame.data)
    except ValueError as exc:
        raise CliError(f"the gateway sent a frame that is not JSON: {frame.data[:200]!r}") from exc
    if not isinstance(payload, dict):
        raise CliError(f"the gateway sent a frame that is not a JSON object: {frame.data[:200]!r}")
    return payload


def handle_frame(frame: SseFrame, state: AnswerState, out: TextIO, err: TextIO) -> None:
    """Progress to ``err``, answer text to ``out`` as it arrives; an error frame ends the run."""
    if frame.event == "error":
        payload = load_json(frame)
        raise CliError(f"{payload.get('message', 'the answer failed')} (code {payload.get('code', '?')})")
    if frame.event == "agent_status":
        line = progress_line(load_json(frame))
        if line is not None:
            print(line, file=err, flush=True)
        return
    if frame.event != "message":
        return
    payload = load_json(frame)
    content = str(payload.get("content") or "")
    if content:
        out.write(content)
        out.flush()
        state.wrote = True
        state.at_line_start = content.endswith("\n")
    state.record_id = str(payload.get("chat_record_id") or state.record_id)
    if payload.get("is_end"):
        state.ended = True


def stream_answer(client: httpx.Client, chat_id: str, question: str, out: TextIO, err: TextIO) -> str:
    """Ask and stream; returns the record id. Refusals (busy chat, too long…) come as HTTP errors
    before the stream starts, failures during the answer as an ``event:error`` frame."""
    state = AnswerState()
    path = f"/api/application/chat_message/{chat_id}"
    try:
        with client.stream("POST", path, json={"message": question, "re_chat": False}) as response:
            if response.is_error:
                response.read()
                raise CliError(error_message(response))
            parser = SseParser()
            for chunk in response.iter_bytes():
                for frame in parser.feed(chunk):
                    handle_frame(frame, state, out, err)
            for frame in parser.close():
                handle_frame(frame, state, out, err)
    finally:
        if state.wrote and not state.at_line_start:
            out.write("\n")
            out.flush()
    if not state.ended:
        raise CliError("the answer stream ended before the answer was complete")
    return state.record_id


def cited_documents(paragraphs: Iterable[dict[str, Any]]) -> list[str]:
    """Document names in evidence order, each with how many of its paragraphs were used."""
    counts: dict[str, int] = {}
    for paragraph in paragraphs:
        name = str(paragraph.get("document_name") or paragraph.get("document_id") or "?")
        counts[name] = counts.get(name, 0) + 1
    return [f"{name}（{count} 段）" for name, count in counts.items()]


def yes_no(value: Any) -> str:
    return "是" if value else "否"


def trace_lines(record: dict[str, Any]) -> list[str]:
    """The saved record as a person reads it: every round, why the loop stopped, what was asked
    after rewriting, and which documents the answer drew on."""
    lines = ["", "── 检索轨迹 ──"]
    for step in record.get("agent_trace") or []:
        queries = " ｜ ".join(str(q) for q in step.get("queries") or []) or "（无）"
        lines.append(f"第 {step.get('round', '?')} 轮 · 查询：{queries}")
        new = len(step.get("new_paragraph_ids") or [])
        detail = f"    新增资料 {new} 段 · 资料充分：{yes_no(step.get('sufficient'))}"
        if step.get("missing"):
            detail += f" · 缺少：{step['missing']}"
        lines.append(detail)
    reason = str(record.get("agent_stop_reason") or "")
    label = STOP_REASON_LABELS.get(reason, "未知")
    lines.append(f"停止原因：{label}（{reason or '无'}）")
    if record.get("missing"):
        lines.append(f"未核实：{record['missing']}")
    lines.append(f"改写后的问题：{record.get('padding_problem_text') or record.get('problem_text') or ''}")
    documents = cited_documents(record.get("paragraph_list") or [])
    lines.append(f"引用文档：{'、'.join(documents) if documents else '（无）'}")
    return lines


def run_ask(client: httpx.Client, args: argparse.Namespace) -> int:
    chat_id = args.chat
    if not chat_id:
        chat_id = str(request_data(client, "GET", f"/api/application/{args.app_id}/chat/open"))
        # stderr, so stdout stays the answer; the id is what a follow-up passes to --chat.
        print(f"chat: {chat_id}（追问请加 --chat {chat_id}）", file=sys.stderr, flush=True)
    record_id = stream_answer(client, chat_id, args.question, sys.stdout, sys.stderr)
    if args.trace:
        record = request_data(client, "GET", f"/api/application/{args.app_id}/chat/{chat_id}/chat_record/{record_id}")
        print("\n".join(trace_lines(record if isinstance(record, dict) else {})))
    return 0


# --- ingest -------------------------------------------------------------------------------


class ProgressBar:
    """``[#####-----] 3/16 name.md`` on stderr: redrawn in place on a terminal, one line per
    file when stderr is a log or a pipe (where carriage returns would pile up)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.tty = stream.isatty()

    def bar(self, done: int, label: str) -> str:
        filled = BAR_WIDTH * done // self.total if self.total else BAR_WIDTH
        return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{self.total} {label}"

    def starting(self, done: int, label: str) -> None:
        """Only a terminal shows the file in flight; a log gets its line when the file is done."""
        if self.tty:
            self.stream.write(f"\r{self.bar(done, label)}\x1b[K")
            self.stream.flush()

    def finished(self, done: int, label: str, failure: str = "") -> None:
        if not self.tty:
            suffix = f"  failed: {failure}" if failure else ""
            self.stream.write(f"{self.bar(done, label)}{suffix}\n")
        else:
            if failure:  # a failure stays on screen above the bar
                self.stream.write(f"\r\x1b[K{label} failed: {failure}\n")
            self.stream.write(f"\r{self.bar(done, label)}\x1b[K")
            if done == self.total:
                self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class Upload:
    name: str
    paragraphs: int = 0
    error: str = ""


def select_files(folder: Path, pattern: str | None) -> list[Path]:
    """Sorted, hidden files left out. Without a pattern, the types the server can split; with
    one, every match is sent and the server judges it (its refusal is then reported)."""
    if pattern:
        candidates = folder.glob(pattern)
    else:
        candidates = (p for p in folder.iterdir() if p.suffix.lower() in DOCUMENT_SUFFIXES)
    return sorted(p for p in candidates if p.is_file() and not p.name.startswith("."))


def upload_file(client: httpx.Client, dataset_id: str, path: Path) -> Upload:
    """One file; a refusal is returned, not raised, so the other files still go."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        return Upload(path.name, error=f"cannot read: {exc.strerror or exc}")
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    try:
        document = request_data(
            client, "POST", f"/api/dataset/{dataset_id}/document", files={"file": (path.name, content, mime)}
        )
    except CliError as exc:
        return Upload(path.name, error=str(exc))
    count = document.get("paragraph_count", 0) if isinstance(document, dict) else 0
    return Upload(path.name, paragraphs=int(count))


def resolve_dataset(client: httpx.Client, dataset_id: str | None, create: str | None) -> str:
    """Create the dataset, or check that it exists and that we may write to it, once: an
    unknown id or a bad token would otherwise fail every file with the same message."""
    if create:
        dataset = request_data(client, "POST", "/api/dataset", json={"name": create, "desc": ""})
        created = str(dataset["id"]) if isinstance(dataset, dict) else ""
        if not created:
            raise CliError("the gateway created the dataset but sent no id")
        print(f"created dataset {created} ({create})", file=sys.stderr, flush=True)
        return created
    assert dataset_id is not None  # the parser requires one of the two
    request_data(client, "GET", f"/api/dataset/{dataset_id}/document")
    return dataset_id


def run_ingest(client: httpx.Client, args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder")
    files = select_files(folder, args.pattern)
    if not files:  # checked before --create, so a wrong folder leaves no empty dataset behind
        what = repr(args.pattern) if args.pattern else "/".join(DOCUMENT_SUFFIXES) + " files"
        raise CliError(f"nothing to upload: no {what} in {folder}")
    dataset_id = resolve_dataset(client, args.dataset_id, args.create)
    bar = ProgressBar(len(files), sys.stderr)
    uploads: list[Upload] = []
    for index, path in enumerate(files, 1):
        bar.starting(index - 1, path.name)
        upload = upload_file(client, dataset_id, path)
        uploads.append(upload)
        bar.finished(index, path.name, upload.error)
    print(summary(dataset_id, uploads))
    return 1 if any(u.error for u in uploads) else 0


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary(dataset_id: str, uploads: Sequence[Upload]) -> str:
    done = [u for u in uploads if not u.error]
    failed = [u.name for u in uploads if u.error]
    paragraphs = sum(u.paragraphs for u in done)
    line = f"dataset {dataset_id}: {plural(len(done), 'document')}, {plural(paragraphs, 'paragraph')}"
    return f"{line}; {len(failed)} failed: {', '.join(failed)}" if failed else line


# --- entry point --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    description = (
        "Ask a knowledge-base application, load a folder of documents, or measure retrieval, over the HTTP API."
    )
    parser = argparse.ArgumentParser(prog="python -m gateway.cli", description=description)
    parser.add_argument("--url", default=None, help="gateway URL (default http://$KB_HTTP_HOST:$KB_HTTP_PORT)")
    parser.add_argument(
        "--token",
        default=os.environ.get("KB_TOKEN", ""),
        help="bearer token: the operator token or an application-… API key (default $KB_TOKEN)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    ask = commands.add_parser("ask", help="ask an application; the answer streams to stdout")
    ask.add_argument("app_id", metavar="APP_ID")
    ask.add_argument("question", metavar="QUESTION")
    ask.add_argument("--chat", metavar="CHAT_ID", help="continue this chat (a follow-up) instead of opening one")
    ask.add_argument("--trace", action="store_true", help="then print the retrieval rounds and the stop reason")

    ingest = commands.add_parser("ingest", help="upload a folder of .md/.txt files into a dataset")
    ingest.add_argument("dataset_id", metavar="DATASET_ID", nargs="?", help="the dataset (or use --create)")
    ingest.add_argument("folder", metavar="FOLDER")
    ingest.add_argument("--create", metavar="NAME", help="create a dataset with this name first")
    ingest.add_argument(
        "--pattern", metavar="GLOB", help="which files to send, e.g. '*.md' (default: every .md/.markdown/.txt file)"
    )

    evaluate = commands.add_parser(
        "eval", help="recall round by round on questions with gold snippets: one round against the loop"
    )
    evaluate.add_argument("app_id", metavar="APP_ID", help="the application whose datasets and settings are used")
    evaluate.add_argument("questions", metavar="QUESTIONS.jsonl", help="one {id, turns:[{question, gold}]} per line")
    evaluate.add_argument(
        "--no-rewrite", action="store_true", help="ask the last turn without the earlier turns (no rewriting)"
    )
    evaluate.add_argument("--json", action="store_true", help="print the route's full JSON instead of the table")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "ingest" and bool(args.dataset_id) == bool(args.create):
        parser.error("ingest takes either a DATASET_ID or --create NAME, not both or neither")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        url = (args.url or default_url()).rstrip("/")
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    commands = {"ask": run_ask, "ingest": run_ingest, "eval": run_eval}
    try:
        with make_client(url, args.token) as client:
            return commands[args.command](client, args)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
    except httpx.HTTPError as exc:
        print(f"error: cannot talk to the gateway at {url}: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
