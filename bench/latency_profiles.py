"""How long a model call takes, for two kinds of deployment: the timings ``loop_latency`` gives
the offline model so the loop is measured as if a real model answered.

A call lasts ``ttft + prompt_tokens / prompt_tps + completion_tokens / output_tps``: a fixed
time to the first token (network, queueing, the first decode step), the prompt's processing
(prefill), and the streamed completion. Prefill is a term of its own rather than folded into
the first token's time because the loop's assessment prompts grow with the evidence (about
1,300 tokens at the median, 3,200 at most on the sample sets) and, on a local GPU, their
prefill is the largest part of the call. The published time-to-first-token figures were taken
with short prompts (a few hundred to a thousand tokens), so the fixed term already holds a small
prefill; counting it again costs the hosted profile under 0.1 s and the local one about 0.3 s.

Sources (pages as stored in December 2026; "estimate" marks a figure of ours):

``deepseek`` — DeepSeek-V3-like model on DeepSeek's own hosted API.
  - Output speed 50 tokens/s: Artificial Analysis measured DeepSeek's API falling from about
    85 to about 50 output tokens/s after V3's launch (their post, as mirrored at
    https://granhotelsantacruz.com/pulse/can-deepseek-keep-up-demand-we-have-seen-40-decrease-9dric).
    Other published figures bracket it: DeepSeek's own service statistics give 20–22 tokens/s
    on average across their V3/R1 traffic (https://aiposthub.cc/5152, a summary of their
    inference-system overview), Vercel's AI Gateway shows 78 tokens/s for DeepSeek serving V3.2
    (https://vercel.com/ai-gateway/models/deepseek-v3.2/providers).
  - Time to first token 1.0 s (estimate): between Vercel's live P50 of 0.8 s for DeepSeek
    serving V3.2 (same page) and TokenMix's 2.0 s median for DeepSeek with a 500-token prompt
    (https://tokenmix.ai/blog/ai-api-response-time-comparison); at peak hours reports of 5–10 s
    exist (https://www.studynil.com/ai/llm/deepseek/issues/deepseek-api-response-slow-optim.html),
    which this profile leaves out. No Artificial Analysis latency figure for V3 was found.
  - Prefill 10,000 tokens/s (estimate): a served request's prefill on a GPU cluster is fast;
    DeepSeek reports 73.7k input tokens/s per H800 node (the overview above), shared by
    every request on the node.

``local_small`` — a ~7B model (Q4_K_M) under Ollama or llama.cpp on one consumer GPU.
  - Output speed 50 tokens/s: an 8B Q4 model on an RTX 3060 12 GB runs at about 50–55
    tokens/s with Ollama or llama.cpp
    (https://specpicks.com/reviews/ollama-vs-llama-cpp-rtx-3060-12gb-tokens-per-second-2026);
    40–60 on an RTX 4060 Ti 16 GB (https://autolearningagents.com/ollama/ollama-performance.php).
  - Prefill 2,000 tokens/s (estimate): Llama 3.1 8B Q4_K_M on an RTX 3080 processes 3,807
    prompt tokens/s (https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/12); a
    7B Q4_0 with a 3,200-token prompt, 1,618 tokens/s
    (https://github.com/ggml-org/llama.cpp/pull/3776); a 3060-class card does about half a
    3080's.
  - Time to first token 0.15 s without the prompt (estimate): no network, the model kept
    loaded; the request's handling and the first decode step.

Output sizes (both profiles; estimates): an assessment's JSON ``{sufficient, missing,
queries}`` 60 completion tokens (the offline model's own JSON measures 45 at the median and 58
on average on dev and dev-hard, counted with ``count_tokens``), a rewrite's standalone question
35 (the offline rewrite's median is 38).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelProfile:
    """The timings of one deployment's model calls (seconds and tokens per second)."""

    name: str
    ttft: float  # time to the first token, the prompt's processing aside
    output_tps: float  # completion tokens per second, once streaming
    prompt_tps: float  # prompt tokens processed per second (prefill)
    assess_tokens: int  # completion tokens of an assessment's JSON
    rewrite_tokens: int  # completion tokens of a rewritten question

    def first_token(self, prompt_tokens: int) -> float:
        """Seconds from sending a call to its first completion token."""
        return self.ttft + prompt_tokens / self.prompt_tps

    def duration(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Seconds from sending a call to its last completion token."""
        return self.first_token(prompt_tokens) + completion_tokens / self.output_tps


DEEPSEEK = ModelProfile("deepseek", ttft=1.0, output_tps=50.0, prompt_tps=10_000.0, assess_tokens=60, rewrite_tokens=35)
LOCAL_SMALL = ModelProfile(
    "local_small", ttft=0.15, output_tps=50.0, prompt_tps=2_000.0, assess_tokens=60, rewrite_tokens=35
)
PROFILES = (DEEPSEEK, LOCAL_SMALL)
