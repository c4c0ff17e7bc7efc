"""Fake model servers that behave like particular providers, on top of ``FakeOpenAI``.

Each keeps the base fake's scripting and recording, and adds what its provider does
differently with the fields a client sends — the differences the client's provider profiles
and its retry without a refused field exist for:

- ``FakeStrictOpenAI`` (api.openai.com): refuses any field outside its API with OpenAI's 400
  body, ``Unrecognized request argument supplied: <field>``; it has no thinking to stream.
- ``FakeDeepSeek``: thinks unless ``thinking: {type: disabled}``; streams ``reasoning_content``
  before the answer, and puts it beside the content of a non-streamed answer.
- ``FakeDashScope``: Qwen3's hybrid thinking, ``enable_thinking`` (on unless false); a
  non-streaming call that leaves it on is refused, as DashScope refuses it.
- ``FakeOllama``: ``/v1`` ignores fields it does not know (``think`` among them); thinking is
  off only with ``reasoning_effort: "none"``, and streamed as ``reasoning``.
"""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from kbcore.models.base import ChatMessage, EvidenceParagraph, GenerationRequest
from tests.fakes.openai_server import FakeOpenAI, Json

THINKING = ("先看问题问的是什么，", "再对照资料。")

# One question's model work against any provider (the contract suite and the bench's providers
# section): a follow-up with its history, a compound question, and the evidence it is answered from.
HISTORY = [ChatMessage("user", "云岭县行政许可多久作出决定？"), ChatMessage("assistant", "18个工作日。")]
COMPOUND = "多久作出决定？如果要延长，需要提交什么材料？"
EVIDENCE = [
    EvidenceParagraph("p1", "云岭县行政许可事项办理规定", "第五条", "应当自受理申请之日起18个工作日内作出决定。")
]


def answer_request() -> GenerationRequest:
    """The answer to ``COMPOUND`` from ``EVIDENCE``, as the chat service asks for it."""
    return GenerationRequest(
        messages=[ChatMessage("system", "依据资料回答"), ChatMessage("user", COMPOUND)],
        question=COMPOUND,
        problem_text=COMPOUND,
        evidence=EVIDENCE,
        sufficient=True,
        stop_reason="sufficient",
        missing="",
    )


# Chat-completions request fields api.openai.com knows (its API reference, 2025).
OPENAI_FIELDS = frozenset(
    {
        "model", "messages", "temperature", "max_tokens", "max_completion_tokens", "stream", "stream_options",
        "response_format", "top_p", "n", "stop", "presence_penalty", "frequency_penalty", "logit_bias",
        "logprobs", "top_logprobs", "user", "seed", "tools", "tool_choice", "parallel_tool_calls",
        "reasoning_effort", "service_tier", "store", "metadata", "modalities", "audio", "prediction",
        "web_search_options", "verbosity", "prompt_cache_key", "safety_identifier", "functions", "function_call",
    }
)  # fmt: skip


def provider_error(status: int, message: str, *, code: str | None = None, param: str | None = None) -> Response:
    """An error in the OpenAI shape, which all four providers' compatible endpoints use."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return JSONResponse({"error": error}, status_code=status)


class FakeStrictOpenAI(FakeOpenAI):
    def refusal(self, body: Json) -> Response | None:
        unknown = sorted(set(body) - OPENAI_FIELDS)
        if not unknown:
            return None
        return provider_error(400, f"Unrecognized request argument supplied: {unknown[0]}")

    def thinks(self, body: Json) -> bool:
        return False


class FakeDeepSeek(FakeOpenAI):
    default_reasoning = THINKING

    def thinks(self, body: Json) -> bool:
        return (body.get("thinking") or {}).get("type") != "disabled"


class FakeDashScope(FakeOpenAI):
    default_reasoning = THINKING

    def thinks(self, body: Json) -> bool:
        return body.get("enable_thinking") is not False

    def refusal(self, body: Json) -> Response | None:
        if body.get("stream") or not self.thinks(body):
            return None
        return provider_error(
            400,
            "parameter.enable_thinking must be set to false for non-streaming calls",
            code="invalid_parameter_error",
        )


class FakeOllama(FakeOpenAI):
    reasoning_field = "reasoning"
    default_reasoning = THINKING

    def thinks(self, body: Json) -> bool:
        return body.get("reasoning_effort") != "none"
