"""Server-sent events in the exact wire format of DESIGN §6 (no space after the colons)."""

from __future__ import annotations

import json
from typing import Any

KEEP_ALIVE = b": keep-alive\n\n"


def _json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event:{name}\ndata:{_json(payload)}\n\n".encode()


def data(payload: dict[str, Any]) -> bytes:
    return f"data:{_json(payload)}\n\n".encode()


def chunk(chat_id: str, record_id: str, content: str, *, is_end: bool) -> bytes:
    """An answer chunk, MaxKB-shaped."""
    return data(
        {
            "chat_id": chat_id,
            "chat_record_id": record_id,
            "id": record_id,
            "operate": True,
            "content": content,
            "reasoning_content": "",
            "is_end": is_end,
            "node_is_end": is_end,
        }
    )


class ChunkFrames:
    """``chunk`` for one answer, byte for byte, with the parts that never change encoded once:
    an answer is dozens of chunks that differ only in their content."""

    __slots__ = ("_head", "_tail")

    def __init__(self, chat_id: str, record_id: str) -> None:
        marker = "\x00"  # cannot occur in the JSON of the fixed fields
        head, _, tail = chunk(chat_id, record_id, marker, is_end=False).partition(json.dumps(marker).encode())
        self._head, self._tail = head, tail

    def __call__(self, content: str) -> bytes:
        return self._head + json.dumps(content, ensure_ascii=False).encode() + self._tail


def error(code: int, message: str) -> bytes:
    return event("error", {"code": code, "message": message})
