"""OpenAI's shapes on the compatible routes (``gateway.openai_wire`` builds them): the model
list and a whole (not streamed) chat completion, with our ``chat_id`` and ``sources``."""

from __future__ import annotations

from typing import Literal

from gateway.shapes.envelope import Shape


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
    role: Literal["assistant"]
    content: str
    reasoning_content: str


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
