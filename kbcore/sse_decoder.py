"""Server-sent events read from a byte stream: the one decoder behind the CLI (the gateway's
answers) and the OpenAI-protocol client (a model's answer stream)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SseFrame:
    event: str  # "message" when the frame names no event, as in the SSE specification
    data: str


class SseParser:
    """Frames out of a byte stream that arrives in arbitrary pieces: a network chunk may end
    inside a frame, inside a CRLF or inside a UTF-8 character, so bytes are buffered until a
    blank line closes the frame and only whole frames are decoded."""

    def __init__(self, errors: str = "replace") -> None:
        # "replace" for a display that must go on; "strict" where a bad byte means a bad stream.
        self._errors = errors
        self._buffer = b""
        self._held_cr = b""

    def feed(self, chunk: bytes) -> list[SseFrame]:
        data = self._held_cr + chunk
        # A CR at the end may be the first half of a CRLF: keep it for the next chunk.
        self._held_cr = b"\r" if data.endswith(b"\r") else b""
        if self._held_cr:
            data = data[:-1]
        self._buffer += data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *blocks, self._buffer = self._buffer.split(b"\n\n")
        return [frame for block in blocks if (frame := parse_block(block, self._errors)) is not None]

    def close(self) -> list[SseFrame]:
        """A last frame the server did not close with a blank line still counts."""
        rest, self._buffer, self._held_cr = self._buffer, b"", b""
        frame = parse_block(rest, self._errors)
        return [frame] if frame is not None else []


def parse_block(block: bytes, errors: str = "replace") -> SseFrame | None:
    """One frame's lines; comments (keep-alives) and frames without data yield nothing."""
    event, data = "message", []
    for line in block.decode("utf-8", errors=errors).split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    return SseFrame(event, "\n".join(data)) if data else None
