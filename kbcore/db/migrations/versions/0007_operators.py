"""operators' work: log filter columns on records, votes, credential expiry and use counts (issue 16)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 09:20:00
"""

from __future__ import annotations

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
