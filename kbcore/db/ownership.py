"""Which service owns which table, and the few uses of a table across that line.

The services share one database, so nothing but this declaration stops one of them from
reading another's rows and coupling itself to their shape. A service owns the tables whose rows
it creates and keeps consistent; any other service asks the owner over RPC, except for the uses
listed in ``CROSS_SERVICE_USES``, each kept because an RPC would be worse for the stated reason.
``tests/unit/test_table_ownership.py`` fails when code in a service (or the kbcore code it
imports) touches a table that is neither its own nor listed here for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

CHAT = "chat"
RETRIEVAL = "retrieval"
CONTEXT = "context"

OWNERS: Mapping[str, str] = {
    # Datasets, their documents and the work queues that fill them.
    "dataset": RETRIEVAL,
    "document": RETRIEVAL,
    "ingest_job": RETRIEVAL,
    "ingest_source_chunk": RETRIEVAL,
    "upload_reservation": RETRIEVAL,
    "embedding_job": RETRIEVAL,
    # Applications, the models the operator registers for them, their chats and who may use them.
    "application": CHAT,
    "model_endpoint": CHAT,
    "chat": CHAT,
    "chat_record": CHAT,
    "chat_record_vote": CHAT,
    "chat_lock": CHAT,
    "application_api_key": CHAT,
    "application_access_token": CHAT,
    "application_visitor": CHAT,
    "visitor_daily_usage": CHAT,
    "rate_window": CHAT,
    # People who operate it, what is granted to them, their tokens, and what they did.
    "user_account": CHAT,
    "user_grant": CHAT,
    "user_token": CHAT,
    "audit_event": CHAT,
    # How far each chat's history has been summarised.
    "chat_context_state": CONTEXT,
}


@dataclass(frozen=True)
class CrossServiceUse:
    """``service`` may touch ``table`` although another service owns it, for ``reason``."""

    service: str
    table: str
    reason: str


CROSS_SERVICE_USES: tuple[CrossServiceUse, ...] = (
    CrossServiceUse(
        RETRIEVAL,
        "audit_event",
        "a change to a dataset, document or paragraph is recorded in the transaction that makes it, so "
        "the trail can never miss a change nor record one that did not happen; an RPC cannot join it",
    ),
    CrossServiceUse(
        RETRIEVAL,
        "user_grant",
        "an editor who creates a dataset is granted it in the transaction that creates it, and a deleted "
        "dataset's grants go with it, so no one is left without, or keeps, access to a dataset",
    ),
    CrossServiceUse(
        RETRIEVAL,
        "application",
        "deleting a dataset takes it out of every application in the same transaction, and a dataset's "
        "embedding model may change only while no application searches it with others; chat calls "
        "retrieval, so asking chat back would tie each service's availability to the other's",
    ),
    CrossServiceUse(
        RETRIEVAL,
        "model_endpoint",
        "searches embed, rerank and assess with the registered model a request names: its row, with "
        "the sealed key, is read where the call is made rather than sending keys across services",
    ),
    CrossServiceUse(
        CONTEXT,
        "model_endpoint",
        "a summary is written by the registered model the request names, read as retrieval reads it",
    ),
    CrossServiceUse(
        CONTEXT,
        "chat",
        "every question's context checks its chat exists in the same query that reads the chat's "
        "summary state; a call to chat, which is the caller, would add a round trip per question",
    ),
    CrossServiceUse(
        CONTEXT,
        "chat_record",
        "the history a context is built from is the chat's finished records, read-only and on every "
        "question; chat calls context, so a call back would make each depend on the other",
    ),
    CrossServiceUse(
        CONTEXT,
        "chat_lock",
        "compacting a chat's history takes the chat's own lease (kbcore.db.lease), so a compaction "
        "and an answer in the same chat never run at once",
    ),
)
