"""OpenAI's shapes on the compatible routes (``gateway.openai.wire`` and ``gateway.openai.text``
build them): the model list and one model, a whole (not streamed) chat completion and legacy
text completion, with our ``chat_id``, ``rounds`` and ``sources``; the legacy stream event and
request body, which the route writes and reads itself."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel

from gateway.shapes.envelope import Shape
from gateway.shapes.streams import OPENAI_CHUNK, OPENAI_ERROR


class ModelObject(Shape):
    """An application, as a model the client may name."""

    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    name: str


class ModelList(Shape):
    object: Literal["list"]
    data: list[ModelObject]


class SourceOut(Shape):
    id: str
    document_name: str
    title: str
    similarity: float
    round: int
    content: str


class CompletionMessage(Shape):
    """The answer; ``reasoning_content`` is the thinking text (the model's, and each retrieval
    round's line), ``rounds`` the round lines alone."""

    role: Literal["assistant"]
    content: str
    reasoning_content: str
    rounds: list[str]


class CompletionChoice(Shape):
    index: int
    message: CompletionMessage
    finish_reason: str


class Usage(Shape):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(Shape):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    chat_id: str
    choices: list[CompletionChoice]
    usage: Usage
    sources: list[SourceOut]


class TextChoice(Shape):
    text: str
    index: int
    logprobs: None
    finish_reason: str
    reasoning_content: str
    rounds: list[str]


class TextCompletionOut(Shape):
    """A legacy completion (``POST …/completions``): the answer in ``choices[0].text``."""

    id: str
    object: Literal["text_completion"]
    created: int
    model: str
    chat_id: str
    choices: list[TextChoice]
    usage: Usage
    sources: list[SourceOut]


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    """The body of a route that reads it itself, for OpenAPI: ``model``'s JSON schema with its
    definitions inlined (the schema's components hold only what FastAPI registered)."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = str(node.get("$ref", ""))
            if ref.startswith("#/$defs/"):
                return inline(definitions[ref.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return {"required": True, "content": {"application/json": {"schema": inline(schema)}}}


# A legacy chunk: a chat chunk's head with its own ``object``; ``choices[0]`` holds ``text`` (or
# ``reasoning_content``), the last chunk adds ``rounds`` to it and ``sources`` beside it.
_CHAT_HEAD = cast("dict[str, Any]", OPENAI_CHUNK["properties"])
TEXT_CHUNK = {**OPENAI_CHUNK, "properties": {**_CHAT_HEAD, "object": {"const": "text_completion"}}}
_DATA = {
    "type": "string",
    "contentMediaType": "application/json",
    "contentSchema": {"anyOf": [TEXT_CHUNK, OPENAI_ERROR]},
}
TEXT_COMPLETION_EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {"event": {"const": "message"}, "data": {"anyOf": [{"const": "[DONE]"}, _DATA]}},
}
