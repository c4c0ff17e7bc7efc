"""operators' work: log filter columns on records, votes, credential expiry and use counts

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 09:20:00
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

RecordId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("chat_record") as batch:
        batch.add_column(sa.Column("stop_reason", sa.String(length=32), nullable=False, server_default=""))
        batch.add_column(sa.Column("sufficient", sa.Boolean(), nullable=True))
        batch.add_column(sa.Column("rounds", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("log_source", sa.String(length=16), nullable=False, server_default=""))
        batch.add_column(sa.Column("caller_ref", sa.String(length=64), nullable=False, server_default=""))
        batch.add_column(sa.Column("improved_paragraph_ids", sa.JSON(), nullable=True))
    op.create_index("ix_chat_record_created_at", "chat_record", ["created_at"])
    _backfill_log_columns()
    op.create_table(
        "chat_record_vote",
        sa.Column("id", RecordId, autoincrement=True, nullable=False),
        sa.Column("record_id", RecordId, nullable=False),
        sa.Column("voter", sa.String(length=80), nullable=False),
        sa.Column("vote", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["chat_record.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("record_id", "voter", name="uq_vote_record_voter"),
    )
    op.create_index("ix_chat_record_vote_record_id", "chat_record_vote", ["record_id"])
    for table in ("application_api_key", "application_access_token"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("expires_at", sa.DateTime(), nullable=True))
            batch.add_column(sa.Column("use_count", sa.BigInteger(), nullable=False, server_default="0"))
            batch.add_column(sa.Column("last_used_at", sa.DateTime(), nullable=True))


BACKFILL_BATCH = 1000
_RECORDS = sa.table(
    "chat_record",
    sa.column("id", RecordId),
    sa.column("details", sa.JSON()),
    sa.column("source", sa.String()),
    sa.column("stop_reason", sa.String()),
    sa.column("sufficient", sa.Boolean()),
    sa.column("rounds", sa.Integer()),
    sa.column("log_source", sa.String()),
)


def _log_columns(details: dict[str, Any]) -> dict[str, Any]:
    """The filter columns from a record's stored RecordDetails JSON (proto field names, enum
    names; default values omitted), as the chat service now writes them when it saves a record.
    Written out here rather than imported: a migration must keep meaning what it meant."""
    retrieval = details.get("retrieval")
    if not isinstance(retrieval, dict):
        return {"stop_reason": "", "sufficient": None, "rounds": 0}
    stop_reason = retrieval.get("stop_reason", "")
    stop_reason = str(stop_reason).removeprefix("STOP_REASON_").lower() if isinstance(stop_reason, str) else ""
    rounds = retrieval.get("rounds")
    return {
        "stop_reason": "" if stop_reason == "unspecified" else stop_reason,
        "sufficient": bool(retrieval.get("sufficient", False)),
        "rounds": len(rounds) if isinstance(rounds, list) else 0,
    }


def _backfill_log_columns() -> None:
    """Records saved before this revision get their filter columns from their details, a batch
    at a time (a large log is not read into memory at once). Where a question came from is
    known only for the OpenAI endpoint (the ``source`` column); the others stay "" (unknown)."""
    connection = op.get_bind()
    update = (
        _RECORDS.update()
        .where(_RECORDS.c.id == sa.bindparam("record_id"))
        .values(
            stop_reason=sa.bindparam("new_stop_reason"),
            sufficient=sa.bindparam("new_sufficient"),
            rounds=sa.bindparam("new_rounds"),
        )
    )
    last = 0
    while True:
        rows = connection.execute(
            sa.select(_RECORDS.c.id, _RECORDS.c.details)
            .where(_RECORDS.c.id > last)
            .order_by(_RECORDS.c.id)
            .limit(BACKFILL_BATCH)
        ).all()
        if not rows:
            break
        changes = []
        for record_id, details in rows:
            parsed = json.loads(details) if isinstance(details, str) else details
            columns = _log_columns(parsed if isinstance(parsed, dict) else {})
            changes.append({"record_id": record_id, **{f"new_{k}": v for k, v in columns.items()}})
        connection.execute(update, changes)
        last = rows[-1][0]
    connection.execute(_RECORDS.update().where(_RECORDS.c.source == "openai_api").values(log_source="openai_api"))


def downgrade() -> None:
    for table in ("application_access_token", "application_api_key"):
        with op.batch_alter_table(table) as batch:
            for column in ("last_used_at", "use_count", "expires_at"):
                batch.drop_column(column)
    op.drop_index("ix_chat_record_vote_record_id", table_name="chat_record_vote")
    op.drop_table("chat_record_vote")
    op.drop_index("ix_chat_record_created_at", table_name="chat_record")
    with op.batch_alter_table("chat_record") as batch:
        for column in ("improved_paragraph_ids", "caller_ref", "log_source", "rounds", "sufficient", "stop_reason"):
            batch.drop_column(column)
