"""record details as the typed RecordDetails message; problem_text lives only there

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 06:50:00

Records saved before this revision hold the HTTP shape of their details (``agent_trace``,
``paragraph_list``, …) and a ``problem_text`` column. They are rewritten into the JSON form of
``kb.chat.v1.RecordDetails`` so that one reader serves every record, old or new.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_RECORDS = sa.table(
    "chat_record",
    sa.column("id", sa.BigInteger()),
    sa.column("details", sa.JSON()),
    sa.column("problem_text", sa.Text()),
)


def _typed(old: dict[str, Any], problem_text: str) -> dict[str, Any]:
    """The old HTTP-shaped details as RecordDetails JSON (proto field names, enum names)."""
    typed: dict[str, Any] = {}
    if old.get("agent_stop_reason"):
        typed["retrieval"] = {
            "problem_text": old.get("problem_text") or problem_text,
            "paragraphs": [
                {**{k: v for k, v in p.items() if k != "similarity"}, "score": p.get("similarity", 0.0)}
                for p in old.get("paragraph_list", [])
            ],
            "rounds": old.get("agent_trace", []),
            "stop_reason": "STOP_REASON_" + str(old["agent_stop_reason"]).upper(),
            "sufficient": bool(old.get("sufficient")),
            "missing": old.get("missing", ""),
            "run_time": (old.get("search_step") or {}).get("run_time", 0.0),
            "rewrite_error": old.get("rewrite_error", ""),
        }
    if old.get("context_info"):
        typed["context"] = old["context_info"]
    chat = old.get("chat_step") or {}
    typed["chat"] = {
        "model": chat.get("model", ""),
        "offline_model": bool(chat.get("offline_model")),
        "run_time": chat.get("run_time", 0.0),
    }
    return typed


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(_RECORDS.c.id, _RECORDS.c.details, _RECORDS.c.problem_text)).all()
    for record_id, details, problem_text in rows:
        old = json.loads(details) if isinstance(details, str) else (details or {})
        if "retrieval" in old or "chat" in old:
            continue
        connection.execute(
            _RECORDS.update().where(_RECORDS.c.id == record_id).values(details=_typed(old, problem_text or ""))
        )
    with op.batch_alter_table("chat_record") as batch:
        batch.drop_column("problem_text")


def downgrade() -> None:
    with op.batch_alter_table("chat_record") as batch:
        batch.add_column(sa.Column("problem_text", sa.Text(), nullable=False, server_default=""))
