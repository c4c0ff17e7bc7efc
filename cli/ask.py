"""``python -m cli ask APP_ID QUESTION``: the answer streams to stdout as it is written, the
progress (in the web UI's words) to stderr; ``--trace`` then prints the saved record."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

import httpx

from cli.client import CliError, error_message, request_data
from gateway.labels import STOP_REASON_LABELS, progress_line
from kbcore.sse import SseFrame, SseParser


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
        with client.stream("POST", path, json={"message": question, "re_chat": False, "progress": "named"}) as response:
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
