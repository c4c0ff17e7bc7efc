"""OpenAI's legacy text-completions wire format (``POST …/completions``), which clients that
predate chat (LlamaIndex's ``OpenAILike(is_chat_model=False)``, litellm's ``text_completion``,
old scripts) still send: the ``prompt`` is the question and the answer is ``text``.

It is the same ``Ask`` as a chat completion, so everything but the request's question and the
answer's shape is shared with ``gateway.openai.wire``: the options, the refusals, the relay.
The rounds go out as ``reasoning_content`` on the choice (there is no delta in this format),
all of them again as ``rounds`` on the last chunk, and the sources beside it
(docs/api/openai.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool, field_validator

from gateway.openai.role_prompt import prompt_turns
from gateway.openai.wire import Answer, AskOptions, CompletionWriter, Conversation, OpenAIError, parse_as, sse_data
from gateway.shapes.validation_words import refused_field
from grpc_stubs.common.v1 import common_pb2
from kbcore.words.said import said


class TextCompletionIn(AskOptions):
    """A legacy completions request: one prompt, which is the question."""

    prompt: str | list[str]
    echo: StrictBool = False
    best_of: int | None = Field(default=None, ge=1)
    logprobs: int | None = Field(default=None, ge=0)
    suffix: str | None = None

    @field_validator("prompt", mode="before")
    @classmethod
    def _one_question(cls, value: Any) -> Any:
        """One prompt, as text: an application answers one question per request, and the
        question is words, not token ids."""
        as_tokens = isinstance(value, list) and bool(value) and all(isinstance(item, int) for item in value)
        if isinstance(value, list) and not as_tokens:  # a list of prompts
            if len(value) != 1:
                raise refused_field("one_prompt", said("send_one_prompt_question_not_application", count=len(value)))
            value = value[0]
        if not isinstance(value, str):
            raise refused_field("prompt_text", said("prompt_must_be_text_question_token"))
        if not value.strip():
            raise refused_field("prompt_empty", said("prompt_empty_question"))
        return value


def parse_text_request(body: bytes) -> TextCompletionIn:
    request = parse_as(TextCompletionIn, body)
    if request.echo:
        raise OpenAIError(400, said("echo_not_supported_answer_never_repeats"), param="echo")
    if request.best_of is not None and request.best_of > 1:
        raise OpenAIError(400, said("best_must_be_1_application_gives"), param="best_of")
    if request.logprobs:
        raise OpenAIError(400, said("logprobs_not_supported_answer_has_no"), param="logprobs")
    if request.suffix:
        raise OpenAIError(400, said("suffix_not_supported_application_answers_does"), param="suffix")
    return request


_ROLES = {"user": common_pb2.ROLE_USER, "assistant": common_pb2.ROLE_ASSISTANT}


def text_question(request: TextCompletionIn) -> Conversation:
    """The prompt as the question, with no history of its own (a named chat brings its own);
    a prompt written as a chat's turns (``gateway.openai.role_prompt``) as that chat: its last
    user turn the question, the earlier turns its history, its system turns the addendum."""
    prompt = request.prompt if isinstance(request.prompt, str) else request.prompt[0]
    turns = prompt_turns(prompt)
    if turns is None:
        return Conversation(prompt.strip(), [], "")
    if not turns[-1].text:
        raise OpenAIError(400, said("prompt_empty_question"), param="prompt")
    history = [common_pb2.Message(role=_ROLES[t.role], content=t.text) for t in turns[:-1] if t.role in _ROLES]
    system = "\n".join(t.text for t in turns[:-1] if t.role not in _ROLES and t.text)
    return Conversation(turns[-1].text, history, system)


class TextCompletion(CompletionWriter):
    """A legacy completion: ``text_completion`` chunks with ``choices[0].text``, or one whole."""

    ID_PREFIX = "cmpl"
    OBJECT = "text_completion"
    CHUNK_OBJECT = "text_completion"

    @staticmethod
    def _choice(text: str, finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"text": text, "index": 0, "logprobs": None, "finish_reason": finish, **extra}

    def chunk(self, choice: dict[str, Any], **extra: Any) -> bytes:
        return sse_data({**self._head(self.CHUNK_OBJECT), "choices": [choice], **extra})

    def opening(self) -> bytes:
        return b""  # the format has no role chunk: the first chunk carries text

    def reasoning(self, text: str) -> bytes:
        return self.chunk(self._choice("", reasoning_content=text))

    def content(self, text: str) -> bytes:
        return self.chunk(self._choice(text))

    def ending(self, sources: list[dict[str, Any]]) -> bytes:
        return self.chunk(self._choice("", "stop", rounds=self.rounds), sources=sources)

    def whole(self, answer: Answer) -> dict[str, Any]:
        choice = self._choice(answer.content, "stop", reasoning_content=answer.reasoning, rounds=self.rounds)
        return {**self._head(self.OBJECT), "choices": [choice], "usage": answer.usage, "sources": answer.sources}
