"""Tables shared by the services; every schema change goes through an Alembic migration."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy import false as sa_false
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

from grpc_stubs.common.v1 import common_pb2
from kbcore.db.stored_words import StoredWords
from kbcore.vocabulary import RECORD_SOURCE, RECORD_STATUS
from kbcore.words.said import Said

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
RecordId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> dt.datetime:
    """Naive UTC: stored the same way on SQLite and PostgreSQL, compared without zone juggling."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def new_id() -> str:
    return str(uuid.uuid4())


class RecordStatus:
    """How a record's status is stored: the wire name of ``kb.common.v1.RecordStatus``."""

    RUNNING = RECORD_STATUS.name(common_pb2.RECORD_STATUS_RUNNING)
    ANSWERED = RECORD_STATUS.name(common_pb2.RECORD_STATUS_ANSWERED)
    FAILED = RECORD_STATUS.name(common_pb2.RECORD_STATUS_FAILED)
    STOPPED = RECORD_STATUS.name(common_pb2.RECORD_STATUS_STOPPED)
    INTERRUPTED = RECORD_STATUS.name(common_pb2.RECORD_STATUS_INTERRUPTED)


FINISHED_STATUSES = (RecordStatus.ANSWERED, RecordStatus.STOPPED)


class RecordSource:
    """How a record's source is stored: the wire name of ``kb.common.v1.RecordSource``."""

    CHAT = RECORD_SOURCE.name(common_pb2.RECORD_SOURCE_CHAT)
    OPENAI_API = RECORD_SOURCE.name(common_pb2.RECORD_SOURCE_OPENAI_API)


class Base(DeclarativeBase):
    pass


class Dataset(Base):
    __tablename__ = "dataset"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    # Embeddings per dataset: the registered embedding model its vectors were made by
    # ("" = the deployment's default embedder) and their size (0 = the default's, for datasets
    # older than this column); the model a re-embedding is switching it to (None: no switch
    # running; "" = back to the default), and why the newest switch failed.
    embedding_model_id: Mapped[str] = mapped_column(String(36), default="", server_default="")
    embedding_dimension: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    embedding_pending_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    embedding_error: Mapped[Said | None] = mapped_column(StoredWords, nullable=False, default="", server_default="")
    # Its web documents fetched again every ``sync_hours`` (0 = never), next at ``sync_due_at``:
    # the process that moves ``sync_due_at`` on (a conditional UPDATE) is the one that syncs.
    sync_hours: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    sync_due_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Document(Base):
    __tablename__ = "document"
    __table_args__ = (UniqueConstraint("dataset_id", "name", name="uq_document_dataset_name"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("dataset.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(300))
    content_hash: Mapped[str] = mapped_column(String(64))
    paragraph_count: Mapped[int] = mapped_column(Integer, default=0)
    char_length: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    # Ingestion: the wire name of kb.retrieval.v1.DocumentStatus, why the newest job
    # failed, the version the vector store serves (0 = none yet), the newest job, and what it was.
    status: Mapped[str] = mapped_column(String(16), default="ready")
    error: Mapped[Said | None] = mapped_column(StoredWords, nullable=False, default="")
    active_version: Mapped[int] = mapped_column(Integer, default=0)
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    source_type: Mapped[str] = mapped_column(String(16), default="")
    source_hash: Mapped[str] = mapped_column(String(64), default="")
    # A document imported from a web page: its address (what identifies it in the dataset), the
    # validators of the served fetch (ETag, Last-Modified) for a conditional request, when it
    # was last checked and what that found ("" = the page is there; "gone"; "unreachable").
    source_url: Mapped[str] = mapped_column(String(2048), default="", server_default="")
    source_etag: Mapped[str] = mapped_column(String(300), default="", server_default="")
    source_modified: Mapped[str] = mapped_column(String(100), default="", server_default="")
    source_checked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    source_state: Mapped[str] = mapped_column(String(16), default="", server_default="")
    source_note: Mapped[Said | None] = mapped_column(StoredWords, nullable=False, default="", server_default="")
    # The rules its file or page is cut into paragraphs by (JSON; "" = the defaults), reused by
    # its next versions: a re-upload without rules, a web sync.
    split_rules: Mapped[str] = mapped_column(Text, default="", server_default="")
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class LeasedJobColumns:
    """The columns every table of leased jobs has, declared once so that the two tables
    (``ingest_job``, ``embedding_job``) cannot drift apart: what the lease contract of
    ``services.retrieval.ingestion.jobs.leased`` reads and writes. Each table adds what its job
    is about, and its ``dataset_id`` (whose foreign key differs between the two)."""

    __tablename__: str  # each table's own

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    # The vector store the job writes into: only processes using that store claim it, so a
    # process with a store of its own (a mistake, or a test) never takes another store's job.
    store_key: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(16))  # queued, a running state, or how it ended
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    holder: Mapped[str | None] = mapped_column(String(80), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[Said | None] = mapped_column(StoredWords, nullable=False, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)

    @declared_attr.directive
    def __table_args__(cls) -> tuple[Any, ...]:
        """The index claims read the queue by: unfinished jobs, oldest first."""
        return (Index(f"ix_{cls.__tablename__}_state_created", "state", "created_at"),)


class IngestJob(LeasedJobColumns, Base):
    """One upload of one document: the version it builds, and who works on it until when (a
    lease, like ``chat_lock``). Its original bytes are ``IngestSourceChunk`` rows while it runs."""

    __tablename__ = "ingest_job"
    document_id: Mapped[str] = mapped_column(ForeignKey("document.id", ondelete="CASCADE"), index=True)
    dataset_id: Mapped[str] = mapped_column(String(36))
    version: Mapped[int] = mapped_column(Integer)
    filename: Mapped[str] = mapped_column(String(300))
    source_type: Mapped[str] = mapped_column(String(16))


class IngestSourceChunk(Base):
    """One piece of an ingestion job's original file, in order (``kbcore.limits.UPLOAD_CHUNK_BYTES``
    each): in SQL because every replica may claim the job (they share no disk), in pieces so that
    no process holds a file whole, neither the request that stores it nor the worker that feeds it
    to its parser. Deleted when the job ends, however it ends (its document keeps the digest that
    tells an unchanged re-upload), and with the job's document."""

    __tablename__ = "ingest_source_chunk"
    job_id: Mapped[str] = mapped_column(ForeignKey("ingest_job.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class UploadReservation(Base):
    """The bytes one upload in flight holds of the deployment's upload budget
    (``KB_UPLOAD_BUDGET_MB``, of which one caller may hold ``KB_UPLOAD_CALLER_MB``): taken when
    its request starts, deleted when the request ends, however it ends. A row whose process died
    stops counting at ``expires_at``, the request's own deadline."""

    __tablename__ = "upload_reservation"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    caller: Mapped[str] = mapped_column(String(80))
    size: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime, index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class EmbeddingJob(LeasedJobColumns, Base):
    """One change of a dataset's embedding model: every served paragraph embedded
    again by the new model into the new model's vector store, staged, then published and the
    dataset flipped in one transaction. Leased like ``IngestJob``; the newest row per dataset
    is what the dataset shows of its switch. Its states: queued, embedding, ready, failed, cancelled."""

    __tablename__ = "embedding_job"
    dataset_id: Mapped[str] = mapped_column(ForeignKey("dataset.id", ondelete="CASCADE"), index=True)
    from_model_id: Mapped[str] = mapped_column(String(36), default="")
    from_dimension: Mapped[int] = mapped_column(Integer, default=0)
    to_model_id: Mapped[str] = mapped_column(String(36), default="")
    to_dimension: Mapped[int] = mapped_column(Integer, default=0)


class Application(Base):
    __tablename__ = "application"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    dataset_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    dialogue_number: Mapped[int] = mapped_column(Integer, default=5)
    search_setting: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    model_setting: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The share page's settings (prologue, sources shown, progress mode): see PageSetting in the proto.
    page_setting: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class ModelEndpoint(Base):
    """A model endpoint the operator registered; applications pick theirs by id in
    ``Application.model_setting`` (``chat_model_id``, ``aux_model_id``). The API key is stored
    sealed by ``kbcore.secret_box`` and never leaves the chat service; ``key_hint`` is what
    lists show of it."""

    __tablename__ = "model_endpoint"
    __table_args__ = (UniqueConstraint("name", name="uq_model_endpoint_name"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(100))
    provider: Mapped[str] = mapped_column(String(16))  # openai, deepseek, dashscope, vllm, ollama, generic
    base_url: Mapped[str] = mapped_column(String(500))
    model: Mapped[str] = mapped_column(String(200))
    purpose: Mapped[str] = mapped_column(String(16))  # chat, auxiliary, embedding, rerank
    api_key_sealed: Mapped[str] = mapped_column(Text, default="")
    key_hint: Mapped[str] = mapped_column(String(8), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class Chat(Base):
    __tablename__ = "chat"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    application_id: Mapped[str] = mapped_column(ForeignKey("application.id", ondelete="CASCADE"), index=True)
    visitor_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    abstract: Mapped[str] = mapped_column(String(200), default="")
    # When its visitor deleted it from their list: hidden from them for good, kept in the log.
    hidden_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class ChatRecord(Base):
    """One question and its answer; raw records are never deleted, compaction only summarises them."""

    __tablename__ = "chat_record"
    __table_args__ = (
        Index("ix_chat_record_chat_id_id", "chat_id", "id"),
        Index("ix_chat_record_created_at", "created_at"),
    )
    id: Mapped[int] = mapped_column(RecordId, primary_key=True, autoincrement=True)
    chat_id: Mapped[str] = mapped_column(ForeignKey("chat.id", ondelete="CASCADE"))
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default=RecordStatus.RUNNING)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    source: Mapped[str] = mapped_column(String(16), default=RecordSource.CHAT, server_default=RecordSource.CHAT)
    message_tokens: Mapped[int] = mapped_column(Integer, default=0)
    answer_tokens: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[Said | None] = mapped_column(StoredWords, nullable=False, default="")
    run_time: Mapped[float] = mapped_column(Float, default=0.0)
    holder: Mapped[str] = mapped_column(String(64), default="")  # the lease holder that runs it
    # False once a re_chat replaced this answer: it stays in the log but leaves the model's history.
    in_history: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)
    # The log's filters, copied out of ``details`` when the record is saved, because
    # JSON cannot be filtered alike on SQLite and PostgreSQL: the stop reason's wire name,
    # whether the evidence was sufficient (None: retrieval never ran), rounds used, where the
    # question came from (the wire name of kb.chat.v1.LogSource) and who asked (an API key's
    # id or a visitor's id), and the paragraphs an operator wrote to improve the answer.
    stop_reason: Mapped[str] = mapped_column(String(32), default="", server_default="")
    sufficient: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    rounds: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    log_source: Mapped[str] = mapped_column(String(16), default="", server_default="")
    caller_ref: Mapped[str] = mapped_column(String(64), default="", server_default="")
    improved_paragraph_ids: Mapped[list[str] | None] = mapped_column(JSON, nullable=True, default=list)


# The table under ChatRecord, for the Core statements built once that every question runs (the
# chat service's record writes, the context service's turn reads).
RECORD_TABLE: Table = ChatRecord.__table__  # type: ignore[assignment]


class RecordVote(Base):
    """One caller's vote on one record (changeable, so one row per record and voter)."""

    __tablename__ = "chat_record_vote"
    __table_args__ = (UniqueConstraint("record_id", "voter", name="uq_vote_record_voter"),)
    id: Mapped[int] = mapped_column(RecordId, primary_key=True, autoincrement=True)
    record_id: Mapped[int] = mapped_column(ForeignKey("chat_record.id", ondelete="CASCADE"), index=True)
    voter: Mapped[str] = mapped_column(String(80))  # "operator", "key:<id>", "visitor:<id>"
    vote: Mapped[str] = mapped_column(String(8))  # the wire name of kb.chat.v1.Vote: up, down
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class ChatContextState(Base):
    """The compaction watermark: summary of every record up to ``through_record_id``."""

    __tablename__ = "chat_context_state"
    chat_id: Mapped[str] = mapped_column(ForeignKey("chat.id", ondelete="CASCADE"), primary_key=True)
    summary: Mapped[str] = mapped_column(Text, default="")
    through_record_id: Mapped[int] = mapped_column(BigInteger, default=0)
    compacted_rounds: Mapped[int] = mapped_column(Integer, default=0)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)


class ChatLock(Base):
    """A lease: one generation or compaction per chat at a time, across every process."""

    __tablename__ = "chat_lock"
    chat_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    purpose: Mapped[str] = mapped_column(String(32))
    acquired_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime, index=True)
    # Set by Stop from any process; the holder polls it while answering.
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False)


class ApiKey(Base):
    """An application API key; only its SHA-256 is stored, the key itself is shown once."""

    __tablename__ = "application_api_key"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    application_id: Mapped[str] = mapped_column(ForeignKey("application.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(24))  # enough to tell keys apart in a list
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    use_count: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class AccessToken(Base):
    """An application's share link: who holds it may become a visitor, within a daily quota."""

    __tablename__ = "application_access_token"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    application_id: Mapped[str] = mapped_column(ForeignKey("application.id", ondelete="CASCADE"), unique=True)
    access_token: Mapped[str] = mapped_column(String(64), unique=True)
    access_num: Mapped[int] = mapped_column(Integer, default=100)  # questions per visitor per day
    # Questions per UTC day from all visitors together: fresh visitor tokens cannot multiply it.
    daily_cap: Mapped[int] = mapped_column(Integer, default=1000, server_default="1000")
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    use_count: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    # Which sites may show the link's page in a frame: any (False), or only allowed_sites, one
    # CSP source expression per line (services/chat/access/embedding_sites.py checks them).
    sites_limited: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    allowed_sites: Mapped[str] = mapped_column(Text, default="", server_default="")


class Visitor(Base):
    """A share-link visitor; its bearer token is stored as SHA-256 only."""

    __tablename__ = "application_visitor"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    application_id: Mapped[str] = mapped_column(ForeignKey("application.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)


class VisitorDailyUsage(Base):
    __tablename__ = "visitor_daily_usage"
    visitor_id: Mapped[str] = mapped_column(ForeignKey("application_visitor.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # UTC date, YYYY-MM-DD
    questions: Mapped[int] = mapped_column(Integer, default=0)


class RateWindow(Base):
    """A fixed-window counter shared by every process (``services.chat.callers.rate_windows``): hits of ``key``
    in ``window`` (a UTC minute or day), raised only while under the limit, in one statement."""

    __tablename__ = "rate_window"
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    window: Mapped[str] = mapped_column(String(16), primary_key=True)
    hits: Mapped[int] = mapped_column(Integer, default=0)


class UserAccount(Base):
    """A person who operates the knowledge base (``services.chat.accounts``). The password is
    stored only as an argon2id hash; a deleted user's row is removed with its tokens and grants,
    while the audit trail keeps their name as it was."""

    __tablename__ = "user_account"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200), default="")  # "" = signs in by link only
    role: Mapped[str] = mapped_column(String(16))  # admin, editor, viewer (kb.chat.v1.Role's wire names)
    is_active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    last_sign_in_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class UserGrant(Base):
    """A dataset or application a user's role applies to (editors and viewers)."""

    __tablename__ = "user_grant"
    user_id: Mapped[str] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), primary_key=True)
    object_kind: Mapped[str] = mapped_column(String(16), primary_key=True)  # dataset, application
    object_id: Mapped[str] = mapped_column(String(36), primary_key=True)


class UserToken(Base):
    """A bearer credential of a user: a session (from sign-in), a personal token (for scripts and
    the CLI) or a one-time sign-in link. Only its SHA-256 is stored."""

    __tablename__ = "user_token"
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # session, personal, signin_link
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(24), default="")
    name: Mapped[str] = mapped_column(String(100), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    # Why it ended (``services.chat.accounts.user_tokens``: signed out, a password reset, a role
    # change …), so its next use is refused with a sentence that says why; "" while it works.
    ended_by: Mapped[str] = mapped_column(String(24), default="")


class AuditEvent(Base):
    """One state-changing operator action, written in the transaction of the change it records.
    Names are copied, not referenced, so the trail outlives the objects and users it names."""

    __tablename__ = "audit_event"
    __table_args__ = (Index("ix_audit_event_at", "at"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=utcnow)
    actor_kind: Mapped[str] = mapped_column(String(16))
    actor_id: Mapped[str] = mapped_column(String(64), default="")
    actor_name: Mapped[str] = mapped_column(String(64), default="")
    client_address: Mapped[str] = mapped_column(String(64), default="")
    action: Mapped[str] = mapped_column(String(64))
    object_kind: Mapped[str] = mapped_column(String(32), default="")
    object_id: Mapped[str] = mapped_column(String(64), default="")
    object_name: Mapped[str] = mapped_column(String(200), default="")
    detail: Mapped[str] = mapped_column(String(500), default="")
