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

from cli.client import gateway_error, request_data
from cli.failure import CliError
from cli.words import CliWords
from kbcore.sse_decoder import SseFrame, SseParser

FOLLOW_UP_OPTION = "--chat"


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
        raise CliError("ask.frame_not_json", frame=repr(frame.data[:200])) from exc
    if not isinstance(payload, dict):
        raise CliError("ask.frame_not_object", frame=repr(frame.data[:200]))
    return payload


def answer_failure(payload: dict[str, Any]) -> CliError:
    """An error frame: the gateway's message (in the language the CLI asked for) and its code."""
    code = payload.get("code", "?")
    if message := payload.get("message"):
        return CliError("ask.failed", message=message, code=code)
    return CliError("ask.failed_unsaid", code=code)


def handle_frame(frame: SseFrame, state: AnswerState, out: TextIO, err: TextIO, words: CliWords) -> None:
    """Progress to ``err``, answer text to ``out`` as it arrives; an error frame ends the run."""
    if frame.event == "error":
        raise answer_failure(load_json(frame))
    if frame.event == "agent_status":
        line = words.progress(load_json(frame))
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


def stream_answer(client: httpx.Client, chat_id: str, question: str, words: CliWords, out: TextIO, err: TextIO) -> str:
    """Ask and stream; returns the record id. Refusals (busy chat, too long…) come as HTTP errors
    before the stream starts, failures during the answer as an ``event:error`` frame."""
    state = AnswerState()
    path = f"/api/application/chat_message/{chat_id}"
    try:
        with client.stream("POST", path, json={"message": question, "re_chat": False, "progress": "named"}) as response:
            if response.is_error:
                response.read()
                raise gateway_error(response)
            parser = SseParser()
            for chunk in response.iter_bytes():
                for frame in parser.feed(chunk):
                    handle_frame(frame, state, out, err, words)
            for frame in parser.close():
                handle_frame(frame, state, out, err, words)
    finally:
        if state.wrote and not state.at_line_start:
            out.write("\n")
            out.flush()
    if not state.ended:
        raise CliError("ask.cut_short")
    return state.record_id


def cited_documents(paragraphs: Iterable[dict[str, Any]], words: CliWords) -> list[str]:
    """Document names in evidence order, each with how many of its paragraphs were used."""
    counts: dict[str, int] = {}
    for paragraph in paragraphs:
        name = str(paragraph.get("document_name") or paragraph.get("document_id") or "?")
        counts[name] = counts.get(name, 0) + 1
    return [words.counted("ask.cited_document", count, name=name) for name, count in counts.items()]


def round_lines(step: dict[str, Any], words: CliWords) -> list[str]:
    """One round of the loop: what it searched for, what it added, and what it still lacked."""
    queries = words("ask.query_separator").join(str(q) for q in step.get("queries") or []) or words("common.none")
    new = len(step.get("new_paragraph_ids") or [])
    detail = words("ask.round_detail", new=new, sufficient=words.yes_no(step.get("sufficient")))
    if step.get("missing"):
        detail += words("ask.round_missing", missing=step["missing"])
    return [words("ask.round", round=step.get("round", "?"), queries=queries), detail]


def trace_lines(record: dict[str, Any], words: CliWords) -> list[str]:
    """The saved record as a person reads it: every round, why the loop stopped, what was asked
    after rewriting, and which documents the answer drew on."""
    lines = ["", words("ask.trace_heading")]
    for step in record.get("agent_trace") or []:
        lines += round_lines(step, words)
    lines.append(words("ask.stop_reason", reason=words.stop_reason(str(record.get("agent_stop_reason") or ""))))
    if record.get("missing"):
        lines.append(words("ask.unverified", missing=record["missing"]))
    lines.append(
        words("ask.rewritten", question=record.get("padding_problem_text") or record.get("problem_text") or "")
    )
    documents = cited_documents(record.get("paragraph_list") or [], words)
    lines.append(words("ask.cited", documents=words.listed(documents) if documents else words("common.none")))
    return lines


def run_ask(client: httpx.Client, args: argparse.Namespace, words: CliWords) -> int:
    chat_id = args.chat
    if not chat_id:
        chat_id = str(request_data(client, "GET", f"/api/application/{args.app_id}/chat/open"))
        # stderr, so stdout stays the answer; the id is what a follow-up passes to --chat.
        print(words("ask.chat_opened", chat_id=chat_id, option=FOLLOW_UP_OPTION), file=sys.stderr, flush=True)
    record_id = stream_answer(client, chat_id, args.question, words, sys.stdout, sys.stderr)
    if args.trace:
        record = request_data(client, "GET", f"/api/application/{args.app_id}/chat/{chat_id}/chat_record/{record_id}")
        print("\n".join(trace_lines(record if isinstance(record, dict) else {}, words)))
    return 0
