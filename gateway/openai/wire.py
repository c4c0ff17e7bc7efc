"""The OpenAI chat-completions wire format: what a request may hold, and the shapes of the
answer (chunks, the whole completion, errors), plus what OpenAI's two completion formats share
(the options every request may carry, the refusal of fields an application cannot honour, the
sources and usage). The legacy text format is ``gateway.openai.text``; the route in
``gateway/openai/routes.py`` relays the chat service's ``Ask`` into either.

A request is checked here before anything runs, and every refusal is an OpenAI-shaped error
that names the field, so SDKs raise their own exception classes with the right status.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from gateway.errors import ApiError, shown
from gateway.presenter import paragraph_out
from gateway.shapes.validation_words import described
from gateway.words.answer_words import REFERENCES_HEADING
from gateway.words.catalogue import word_in
from grpc_stubs.common.v1 import common_pb2
from kbcore.refusals.error_catalogue import openai_code, openai_type
from kbcore.words.language import Language
from kbcore.words.said import Said, said

MAX_MESSAGES = 1000
OBJECT_OWNER = "kb-chat"
# Fields of OpenAI's API that this endpoint cannot honour: refused by name, never ignored,
# unless the value asks for nothing an application lacks (``HARMLESS``): front-ends send
# ``tool_choice: "none"`` or ``"auto"`` with no tools, ``modalities: ["text"]``,
# ``response_format: {"type": "text"}`` and ``logprobs: false``, by default.
UNSUPPORTED = (
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "audio",
    "modalities",
    "prediction",
    "logprobs",
    "top_logprobs",
    "response_format",
    "logit_bias",
)
HARMLESS: dict[str, tuple[Any, ...]] = {
    "tool_choice": ("none", "auto"),
    "function_call": ("none", "auto"),
    "modalities": (["text"],),
    "logprobs": (False,),
    "response_format": ({"type": "text"},),
}
WHY_UNSUPPORTED = {
    "tools": said("application_answers_knowledge_base_calls_no_2"),
    "tool_choice": said("application_calls_no_tools_only_none"),
    "functions": said("application_answers_knowledge_base_calls_no"),
    "function_call": said("application_calls_no_functions_only_none"),
    "audio": said("application_answers_text_only"),
    "modalities": said("application_answers_text_only_modalities_may"),
    "prediction": said("application_writes_own_answer_takes_no"),
    "logprobs": said("answer_has_no_token_probabilities"),
    "top_logprobs": said("answer_has_no_token_probabilities"),
    "response_format": said("application_answers_prose_with_citations"),
    "logit_bias": said("application_writes_own_answer_takes_no_bias"),
}


class OpenAIError(Exception):
    """A refusal in OpenAI's error shape: its type is the catalogue's for its HTTP status
    (``kbcore.refusals.error_catalogue``), its code the one given (none unless the refusal has one)."""

    def __init__(
        self,
        status: int,
        words: Said,
        param: str | None = None,
        code: str | None = None,
        problems: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(words)
        self.status = status
        self.words = words
        self.param = param
        self.code = code
        self.problems = problems  # a body that did not fit its shape: pydantic's problems, described per reader

    @classmethod
    def invalid_body(cls, problem: Mapping[str, Any]) -> OpenAIError:
        """A body that does not fit the request's shape: its first problem, naming the field."""
        field = ".".join(str(part) for part in problem.get("loc", ()))
        return cls(400, said("request_invalid"), param=field or None, problems=[problem])

    def message_in(self, language: Language) -> str:
        """The refusal's words as a reader of ``language`` reads them."""
        return described(self.problems, language) if self.problems else shown(self.words, self.status, language)

    def body(self, language: Language) -> dict[str, Any]:
        """OpenAI's error object, its message in ``language``."""
        message = self.message_in(language)
        return {"error": {"message": message, "type": openai_type(self.status), "param": self.param, "code": self.code}}


def as_openai_error(error: ApiError) -> OpenAIError:
    """A gateway refusal (a backend's, through ``from_grpc``, or the gateway's own) in OpenAI's
    shape, with the code the catalogue gives its HTTP status."""
    return OpenAIError(error.status, error.words, code=openai_code(error.status))


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None


class StreamOptions(BaseModel):
    include_usage: StrictBool = False


class AskOptions(BaseModel):
    """What both completion formats take besides the question; our own additions are
    ``chat_id``, ``show_rounds`` and ``references``."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(default="", max_length=200)
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    n: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    user: str | None = Field(default=None, max_length=256)
    # Ours: continue a chat kept by the server (its history, not the messages sent); show the
    # retrieval rounds as reasoning; append numbered references to the answer.
    chat_id: str | None = Field(default=None, max_length=64)
    show_rounds: StrictBool = True
    references: StrictBool = False


class CompletionIn(AskOptions):
    """A chat-completions request: the question is the last user message."""

    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)


@dataclass(frozen=True)
class Conversation:
    """The request as the chat service needs it."""

    question: str
    history: list[common_pb2.Message]
    system: str


Request = TypeVar("Request", bound=AskOptions)


def parse_as(kind: type[Request], body: bytes) -> Request:
    """``body`` as a request of ``kind``, with every field it cannot honour refused by name."""
    try:
        request = kind.model_validate_json(body)
    except ValidationError as exc:
        raise OpenAIError.invalid_body(exc.errors()[0]) from exc
    extra = request.model_extra or {}
    for name in UNSUPPORTED:
        value = extra.get(name)
        if value not in (None, [], {}) and value not in HARMLESS.get(name, ()):
            raise OpenAIError(
                400, said("not_supported", name=name, why_unsupported_name=WHY_UNSUPPORTED[name]), param=name
            )
    if request.n is not None and request.n > 1:
        raise OpenAIError(400, said("n_must_be_1_application_gives"), param="n")
    return request


def parse_request(body: bytes) -> CompletionIn:
    return parse_as(CompletionIn, body)


def _text(message: MessageIn, index: int) -> str:
    """A message's text: a string, or the text parts of a list (other parts are refused by name)."""
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    texts = []
    for part in message.content:
        if part.type != "text":
            raise OpenAIError(
                400,
                said("messages_content_not_supported_only_text", index=index, part_type=part.type),
                param=f"messages.{index}",
            )
        texts.append(part.text or "")
    return "".join(texts)


def conversation(request: CompletionIn) -> Conversation:
    """The last user message is the question; earlier user/assistant turns are the history;
    system (and developer) messages are appended to the application's system prompt."""
    messages = request.messages
    if messages[-1].role != "user":
        raise OpenAIError(400, said("last_message_must_come_user_question"), param="messages")
    question = _text(messages[-1], len(messages) - 1).strip()
    if not question:
        raise OpenAIError(400, said("last_user_message_empty"), param="messages")
    history: list[common_pb2.Message] = []
    system: list[str] = []
    roles = {"user": common_pb2.ROLE_USER, "assistant": common_pb2.ROLE_ASSISTANT}
    for index, message in enumerate(messages[:-1]):
        text = _text(message, index)
        if message.role in ("system", "developer"):
            system.append(text)
        elif message.role in roles:
            history.append(common_pb2.Message(role=roles[message.role], content=text))
    return Conversation(question, history, "\n".join(s for s in system if s.strip()))


def source_json(paragraph: common_pb2.Paragraph) -> dict[str, Any]:
    shown = paragraph_out(paragraph).wire()
    return {key: shown[key] for key in ("id", "document_name", "title", "similarity", "round", "content")}


def references(sources: Sequence[common_pb2.Paragraph], language: Language) -> str:
    """Numbered Markdown references, one per document and title, in evidence order, under a
    heading in the reader's language."""
    seen: dict[tuple[str, str], int] = {}
    for paragraph in sources:
        seen.setdefault((paragraph.document_name, paragraph.title), len(seen) + 1)
    lines = [f"[{n}] {name}" + (f" · {title}" if title and title != name else "") for (name, title), n in seen.items()]
    return f"\n\n{word_in(REFERENCES_HEADING, language)}\n" + "\n".join(lines) if lines else ""


@dataclass(frozen=True)
class Answer:
    """A whole answer, for a response that is not streamed."""

    content: str
    reasoning: str
    usage: dict[str, int]
    sources: list[dict[str, Any]]


class CompletionWriter(ABC):
    """The fixed parts of one answer in one of OpenAI's completion formats, and the pieces the
    relay writes: thinking, a retrieval round's line, answer text, the ending. It keeps the
    round lines it wrote, so the last chunk can carry them all (``rounds``): a client helper
    that merges chunks by overwriting each field, not by concatenating, still ends with every
    round (docs/api/openai.md)."""

    ID_PREFIX = ""
    OBJECT = ""
    CHUNK_OBJECT = ""

    def __init__(self, model: str, chat_id: str, record_id: str) -> None:
        self.id = f"{self.ID_PREFIX}-{record_id}"
        self.model = model
        self.chat_id = chat_id
        self.created = int(time.time())
        self.rounds: list[str] = []

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model, "chat_id": self.chat_id}

    def keep_round(self, line: str) -> str:
        """Keep a retrieval round's line for the ending; the thinking text that shows it."""
        self.rounds.append(line)
        return line + "\n"

    def round(self, line: str) -> bytes:
        """A retrieval round's line, streamed as thinking and kept for the ending."""
        return self.reasoning(self.keep_round(line))

    def usage_chunk(self, usage: dict[str, int]) -> bytes:
        return sse_data({**self._head(self.CHUNK_OBJECT), "choices": [], "usage": usage})

    @abstractmethod
    def opening(self) -> bytes: ...

    @abstractmethod
    def reasoning(self, text: str) -> bytes: ...

    @abstractmethod
    def content(self, text: str) -> bytes: ...

    @abstractmethod
    def ending(self, sources: list[dict[str, Any]]) -> bytes: ...

    @abstractmethod
    def whole(self, answer: Answer) -> dict[str, Any]: ...


class Completion(CompletionWriter):
    """A chat completion: ``chat.completion.chunk`` deltas, or one ``chat.completion``."""

    ID_PREFIX = "chatcmpl"
    OBJECT = "chat.completion"
    CHUNK_OBJECT = "chat.completion.chunk"

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        body = {**self._head(self.CHUNK_OBJECT), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return sse_data({**body, **extra})

    def opening(self) -> bytes:
        return self.chunk({"role": "assistant", "content": ""})

    def reasoning(self, text: str) -> bytes:
        return self.chunk({"reasoning_content": text})  # DeepSeek's field, which reasoning clients show

    def content(self, text: str) -> bytes:
        return self.chunk({"content": text})

    def ending(self, sources: list[dict[str, Any]]) -> bytes:
        return self.chunk({"rounds": self.rounds}, "stop", sources=sources)

    def whole(self, answer: Answer) -> dict[str, Any]:
        message = {
            "role": "assistant",
            "content": answer.content,
            "reasoning_content": answer.reasoning,
            "rounds": self.rounds,
        }
        return {
            **self._head(self.OBJECT),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": answer.usage,
            "sources": answer.sources,
        }


def usage_json(done: Any) -> dict[str, int]:
    return {
        "prompt_tokens": done.message_tokens,
        "completion_tokens": done.answer_tokens,
        "total_tokens": done.message_tokens + done.answer_tokens,
    }


def sse_data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def model_json(application_id: str, name: str, created: int = 0) -> dict[str, Any]:
    return {"id": application_id, "object": "model", "created": created, "owned_by": OBJECT_OWNER, "name": name}
