"""The events of the two answer streams, as OpenAPI describes a ``text/event-stream``: one schema
per event (``event`` is "message" when the frame names none), its ``data`` a JSON text whose
shape is ``contentSchema``. Keep-alive comments are not events."""

from __future__ import annotations

from typing import Any

from gateway.shapes.envelope import Shape


class StreamError(Shape):
    """A failure after the answer started: the HTTP status it would have had, and why."""

    code: int
    message: str


class AnswerChunk(Shape):
    """MaxKB's answer chunk: the answer's text in ``content``, the model's thinking (and, in the
    ``reasoning`` progress form, each stage's line) in ``reasoning_content``; the last one has
    ``is_end`` true, or, when the answer failed after it started (forms other than ``named``),
    ``error`` and no ``is_end``."""

    chat_id: str
    chat_record_id: str
    id: str
    operate: bool
    content: str
    reasoning_content: str
    is_end: bool
    node_is_end: bool
    error: StreamError | None = None


# A stage of the answer: ``phase`` and that phase's own fields (they differ by phase).
AGENT_STATUS = {"type": "object", "required": ["phase"], "properties": {"phase": {"type": "string"}}}
# An OpenAI chunk's fixed head; ``choices`` holds the delta, the last chunk adds ``sources``
# and, when asked, a chunk with ``usage`` follows.
OPENAI_CHUNK = {
    "type": "object",
    "required": ["id", "object", "created", "model", "chat_id", "choices"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "chat.completion.chunk"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "chat_id": {"type": "string"},
        "choices": {"type": "array"},
    },
}
OPENAI_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "object"}}}


def _json(content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "string", "contentMediaType": "application/json", "contentSchema": content}


def _event(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["event", "data"], "properties": {"event": {"const": name}, "data": data}}


ANSWER_EVENT: dict[str, Any] = {
    "oneOf": [
        _event("message", _json(AnswerChunk.model_json_schema())),
        _event("agent_status", _json(AGENT_STATUS)),
        _event("error", _json(StreamError.model_json_schema())),
    ]
}
OPENAI_EVENT: dict[str, Any] = _event(
    "message", {"anyOf": [{"const": "[DONE]"}, _json({"anyOf": [OPENAI_CHUNK, OPENAI_ERROR]})]}
)
