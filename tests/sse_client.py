"""A strict reader of the gateway's SSE stream: it parses frames byte for byte and refuses
anything that is not exactly the gateway's wire format (``gateway/sse_wire.py``: no space after
the colons, compact JSON)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

_PROGRESS = re.compile(rb"^event:agent_status\ndata:(\{.*\})$", re.S)
_ERROR = re.compile(rb"^event:error\ndata:(\{.*\})$", re.S)
_CHUNK = re.compile(rb"^data:(\{.*\})$", re.S)
_COMMENT = re.compile(rb"^:[^\n]*$")


@dataclass
class Frame:
    kind: str  # "progress" | "chunk" | "error" | "comment"
    data: dict[str, Any]
    raw: bytes


def parse_frames(body: bytes) -> list[Frame]:
    assert body.endswith(b"\n\n"), f"stream does not end with a blank line: {body[-40:]!r}"
    frames = []
    for raw in body[:-2].split(b"\n\n"):
        for kind, pattern in (("progress", _PROGRESS), ("error", _ERROR), ("chunk", _CHUNK)):
            match = pattern.match(raw)
            if match:
                frames.append(Frame(kind, json.loads(match.group(1)), raw))
                break
        else:
            assert _COMMENT.match(raw), f"not an SSE frame of our format: {raw!r}"
            frames.append(Frame("comment", {}, raw))
    return frames


async def ask(
    client: httpx.AsyncClient, chat_id: str, message: str, *, received: bytearray | None = None, **extra: Any
) -> tuple[httpx.Response, list[Frame]]:
    """Ask and read the whole answer; ``received``, when given, fills as the bytes arrive (for a
    test that acts mid-answer). Progress comes as named events unless ``extra`` asks otherwise:
    the form this reader tells apart from answer chunks."""
    body = bytearray() if received is None else received
    asked = {"message": message, "progress": "named", **extra}
    async with client.stream("POST", f"/api/application/chat_message/{chat_id}", json=asked) as r:
        if r.status_code != 200:  # a refusal is one JSON body: kept on the response for .json()
            await r.aread()
            return r, []
        async for piece in r.aiter_bytes():
            body.extend(piece)
    return r, parse_frames(bytes(body))


def answer_text(frames: list[Frame]) -> str:
    return "".join(f.data["content"] for f in frames if f.kind == "chunk")
