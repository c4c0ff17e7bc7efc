"""What each kind of OpenAI-compatible endpoint needs beyond the common protocol, decided once.

"OpenAI-compatible" servers differ in the fields they accept: each spells "do not think" its
own way, and some refuse a field they do not know (api.openai.com answers 400). Sending the
wrong spelling either wastes an auxiliary call's token budget on reasoning or turns every call
into an error, so the spelling is a property of the provider, chosen here from a small table:

- openai: nothing (its chat models have no switch; unknown fields are refused);
- deepseek: ``thinking: {type: disabled}`` (api-docs.deepseek.com, "Thinking Mode");
- dashscope (Qwen on Alibaba Cloud Model Studio): top-level ``enable_thinking: false``, which
  its non-streaming calls to hybrid-thinking Qwen3 models require;
- vllm / sglang: ``chat_template_kwargs: {enable_thinking: false}`` (vLLM "Reasoning Outputs");
- ollama: ``reasoning_effort: "none"``: Ollama's ``/v1`` route maps ``reasoning_effort`` to its
  native ``think`` switch and ignores a ``think`` field (ollama/ollama#14820, docs
  "OpenAI compatibility");
- generic: ``thinking: {type: disabled}`` (DeepSeek's and others' spelling).

Whatever a profile gets wrong for a particular server is caught by the client's retry
without a refused field (``field_retry``), so a wrong guess costs one call, not every call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

OLLAMA_PORT = 11434


@dataclass(frozen=True)
class ProviderProfile:
    name: str
    # merged into the body of auxiliary calls when thinking is to be disabled
    no_thinking: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    json_mode: bool = True  # send ``response_format: {type: json_object}`` with the assessment
    stream_usage: bool = True  # send ``stream_options: {include_usage: true}`` with answers


def _profile(name: str, no_thinking: dict[str, Any], **options: bool) -> ProviderProfile:
    return ProviderProfile(name, MappingProxyType(no_thinking), **options)


_QWEN_TEMPLATE_OFF = {"chat_template_kwargs": {"enable_thinking": False}}
PROFILES: Mapping[str, ProviderProfile] = MappingProxyType(
    {
        "openai": _profile("openai", {}),
        "deepseek": _profile("deepseek", {"thinking": {"type": "disabled"}}),
        "dashscope": _profile("dashscope", {"enable_thinking": False}),
        "vllm": _profile("vllm", _QWEN_TEMPLATE_OFF),
        "sglang": _profile("sglang", _QWEN_TEMPLATE_OFF),
        "ollama": _profile("ollama", {"reasoning_effort": "none"}),
        "generic": _profile("generic", {"thinking": {"type": "disabled"}}),
    }
)
_HOSTS = {"api.openai.com": "openai", "api.deepseek.com": "deepseek"}


def detect_provider(base_url: str) -> str:
    """The provider a base URL most likely is, by its host (or Ollama's well-known port)."""
    parts = urlsplit(base_url if "//" in base_url else f"//{base_url}")
    host = (parts.hostname or "").lower()
    if host in _HOSTS:
        return _HOSTS[host]
    if host.startswith("dashscope") and host.endswith(".aliyuncs.com"):  # also dashscope-intl
        return "dashscope"
    try:
        port = parts.port
    except ValueError:
        port = None
    return "ollama" if port == OLLAMA_PORT else "generic"


def provider_profile(provider: str, base_url: str) -> ProviderProfile:
    """The named profile, or the one detected from ``base_url`` when ``provider`` is empty.

    An unknown name is refused rather than guessed: it is a configuration mistake."""
    name = provider.strip().lower() or detect_provider(base_url)
    if name not in PROFILES:
        raise ValueError(f"unknown model provider {provider!r}; expected one of: {', '.join(PROFILES)}")
    return PROFILES[name]
