"""Every metric the project exports, declared once, and the few helpers that record them.

Names follow Prometheus conventions: the ``kb_`` prefix, ``_total`` counters, base units
(``_seconds``), and label values from bounded sets only: route templates and RPC names (never
a path with ids in it), status codes, stop reasons, record statuses, job outcomes, and model
names. A model label is the name an operator configured or registered (``KB_MODEL_CHAT``, a
registered endpoint's model id): bounded by the registry, never by what users send.

Recording is once per request, question, model call or ingestion job, never per streamed chunk.
"""

from __future__ import annotations

import asyncio
import sys
import time
from types import TracebackType

from prometheus_client import Counter, Gauge, Histogram

from kbcore.metrics.registry import REGISTRY

# Requests last from milliseconds (a health check) to minutes (a streamed answer).
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
MODEL_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0)
ROUND_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8)  # KB_AGENT_MAX_ROUNDS is at most 6
EVIDENCE_BUCKETS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
MODEL_LABEL_CHARS = 80  # a registered name is the operator's text: kept to a sane length

# --- the gateway (HTTP) -------------------------------------------------------------------
HTTP_REQUESTS = Counter(
    "kb_http_requests_total",
    "HTTP requests the gateway answered, by method, route template and status code",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_DURATION = Histogram(
    "kb_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response (a streamed answer: its last event)",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
SSE_STREAMS = Gauge(
    "kb_http_sse_streams_active",
    "Server-sent-event responses (streamed answers) the gateway is sending now",
    registry=REGISTRY,
)

# --- every gRPC service -------------------------------------------------------------------
GRPC_HANDLED = Counter(
    "kb_grpc_server_handled_total",
    "RPCs a service completed, by service, method and status code (a stream: the status it ended with)",
    ["grpc_service", "grpc_method", "grpc_code"],
    registry=REGISTRY,
)
GRPC_DURATION = Histogram(
    "kb_grpc_server_handling_seconds",
    "Time from an RPC's arrival to its end (a stream: its last message)",
    ["grpc_service", "grpc_method"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)

# --- questions (the chat service) ---------------------------------------------------------
QUESTIONS = Counter(
    "kb_questions_total",
    "Questions that ended, by the retrieval loop's stop reason (none: it never finished) and the record's status",
    ["stop_reason", "status"],
    registry=REGISTRY,
)
QUESTION_ROUNDS = Histogram(
    "kb_question_rounds",
    "Retrieval rounds per question (questions whose retrieval ran)",
    buckets=ROUND_BUCKETS,
    registry=REGISTRY,
)
QUESTION_EVIDENCE = Histogram(
    "kb_question_evidence_paragraphs",
    "Evidence paragraphs handed to generation per question (questions whose retrieval ran)",
    buckets=EVIDENCE_BUCKETS,
    registry=REGISTRY,
)
LEASE_CONFLICTS = Counter(
    "kb_chat_lease_conflicts_total",
    "Questions refused because their chat was already answering or being compacted (HTTP 409)",
    registry=REGISTRY,
)

# --- model calls (any process) ------------------------------------------------------------
MODEL_CALLS = Counter(
    "kb_model_calls_total",
    "Calls to a model, by model, purpose (chat, auxiliary, embedding, rerank) and outcome (ok, error, cancelled)",
    ["model", "purpose", "outcome"],
    registry=REGISTRY,
)
MODEL_DURATION = Histogram(
    "kb_model_call_duration_seconds",
    "Duration of a model call (a streamed answer: until its last delta)",
    ["model", "purpose"],
    buckets=MODEL_BUCKETS,
    registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "kb_model_tokens_total",
    "Tokens of model calls, by model, purpose and kind (prompt, completion), as the endpoint reported or estimated",
    ["model", "purpose", "kind"],
    registry=REGISTRY,
)

# --- ingestion (the retrieval service) ----------------------------------------------------
INGESTION_JOBS = Counter(
    "kb_ingestion_jobs_total",
    "Ingestion jobs this process ended, by outcome (ready, failed, cancelled)",
    ["outcome"],
    registry=REGISTRY,
)
INGESTION_PARAGRAPHS = Counter(
    "kb_ingestion_paragraphs_total",
    "Paragraphs embedded and published by the ingestion jobs that completed (rate() = paragraphs/s)",
    registry=REGISTRY,
)


class Purpose:
    """What a model call was for: the ``purpose`` label's values."""

    CHAT = "chat"
    AUXILIARY = "auxiliary"
    EMBEDDING = "embedding"
    RERANK = "rerank"


def outcome_of(error: BaseException | None) -> str:
    """A call's ``outcome`` label: the caller going away is not the model failing."""
    if error is None:
        return "ok"
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return "cancelled"
    return "error"


def stream_outcome(finished: bool) -> str:
    """The outcome of a streamed answer, from its generator's ``finally``: ok when the model
    finished, else what is ending the generator (a close by the reader is ``cancelled``)."""
    return "ok" if finished else outcome_of(sys.exc_info()[1] or Exception())


def model_label(model: str) -> str:
    return model[:MODEL_LABEL_CHARS] or "unnamed"


class ModelCall:
    """One model call, timed from its creation: a context manager around a call, or ended
    explicitly (``end``) from a streamed answer's ``finally``."""

    __slots__ = ("completion_tokens", "model", "prompt_tokens", "purpose", "started")

    def __init__(self, model: str, purpose: str) -> None:
        self.model, self.purpose = model_label(model), purpose
        self.started = time.perf_counter()
        self.prompt_tokens = self.completion_tokens = 0

    def tokens(self, prompt: int, completion: int = 0) -> None:
        self.prompt_tokens, self.completion_tokens = prompt, completion

    def end(self, outcome: str) -> None:
        MODEL_CALLS.labels(self.model, self.purpose, outcome).inc()
        MODEL_DURATION.labels(self.model, self.purpose).observe(time.perf_counter() - self.started)
        if self.prompt_tokens:
            MODEL_TOKENS.labels(self.model, self.purpose, "prompt").inc(self.prompt_tokens)
        if self.completion_tokens:
            MODEL_TOKENS.labels(self.model, self.purpose, "completion").inc(self.completion_tokens)

    def __enter__(self) -> ModelCall:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.end(outcome_of(error))


def observe_question(status: str, stop_reason: str, rounds: int | None, evidence: int | None) -> None:
    """One question that ended; ``rounds``/``evidence`` None when its retrieval never ran."""
    QUESTIONS.labels(stop_reason or "none", status).inc()
    if rounds is not None:
        QUESTION_ROUNDS.observe(rounds)
    if evidence is not None:
        QUESTION_EVIDENCE.observe(evidence)


def observe_ingestion_job(outcome: str, paragraphs: int) -> None:
    INGESTION_JOBS.labels(outcome).inc()
    if paragraphs:
        INGESTION_PARAGRAPHS.inc(paragraphs)
