"""Server-sent events in one exact wire format (no space after the colons, compact JSON), which
the stream's golden tests (tests/e2e/test_wire_golden.py) hold byte for byte."""

from __future__ import annotations

import json
from typing import Any

from kbcore.words.said import Said, said

KEEP_ALIVE = b": keep-alive\n\n"


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event:{name}\ndata:{_json(payload)}\n\n".encode()


def data(payload: dict[str, Any]) -> bytes:
    return f"data:{_json(payload)}\n\n".encode()


def chunk(chat_id: str, record_id: str, content: str, *, is_end: bool, reasoning: str = "") -> bytes:
    """An answer chunk, MaxKB-shaped: the answer's text in ``content``, a reasoning model's
    thinking in ``reasoning_content`` (MaxKB's field for it; a chunk carries one or the other)."""
    return data(
        {
            "chat_id": chat_id,
            "chat_record_id": record_id,
            "id": record_id,
            "operate": True,
            "content": content,
            "reasoning_content": reasoning,
            "is_end": is_end,
            "node_is_end": is_end,
        }
    )


_MARKER = "\x00"  # cannot occur in the JSON of the fixed fields


class ChunkFrames:
    """``chunk`` for one answer, byte for byte, with the parts that never change encoded once:
    an answer is dozens of chunks that differ only in their content (or thinking)."""

    __slots__ = ("_head", "_tail", "_thinking_head", "_thinking_tail")

    def __init__(self, chat_id: str, record_id: str) -> None:
        marker = json.dumps(_MARKER).encode()
        self._head, _, self._tail = chunk(chat_id, record_id, _MARKER, is_end=False).partition(marker)
        thinking = chunk(chat_id, record_id, "", is_end=False, reasoning=_MARKER)
        self._thinking_head, _, self._thinking_tail = thinking.partition(marker)

    def __call__(self, content: str) -> bytes:
        return self._head + json.dumps(content, ensure_ascii=False).encode() + self._tail

    def reasoning(self, text: str) -> bytes:
        """A chunk of the model's thinking, its ``content`` empty."""
        return self._thinking_head + json.dumps(text, ensure_ascii=False).encode() + self._thinking_tail


def error(code: int, message: str) -> bytes:
    return event("error", {"code": code, "message": message})


def failed_answer(words: Said) -> Said:
    """What an answer that failed reads as in its last chunk (the caller shows it in the reader's
    language)."""
    return said("answer_failed", message=words)


def failed_chunk(chat_id: str, record_id: str, code: int, message: str, content: str) -> bytes:
    """The last chunk of an answer that failed after it started, for clients that read no event
    names: the failure in words in ``content`` (what such a page shows: ``failed_answer``), and in
    ``error``. Never ``is_end``: that says the answer was saved whole, and the stream simply ends
    after it."""
    frame = {
        "chat_id": chat_id,
        "chat_record_id": record_id,
        "id": record_id,
        "operate": True,
        "content": content,
        "reasoning_content": "",
        "is_end": False,
        "node_is_end": False,
        "error": {"code": code, "message": message},
    }
    return data(frame)
