"""web sources and split rules: where a document imported from a web page came from and how it
was last checked (its validators for a conditional request), each dataset's re-sync schedule,
and the rules each document is cut into paragraphs by

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 08:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("document") as batch:
        batch.add_column(sa.Column("source_url", sa.String(2048), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_etag", sa.String(300), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_modified", sa.String(100), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_checked_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("source_state", sa.String(16), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_note", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("split_rules", sa.Text(), nullable=False, server_default=""))
    with op.batch_alter_table("dataset") as batch:
        batch.add_column(sa.Column("sync_hours", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("sync_due_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("dataset") as batch:
        batch.drop_column("sync_due_at")
        batch.drop_column("sync_hours")
    with op.batch_alter_table("document") as batch:
        for column in (
            "split_rules",
            "source_note",
            "source_state",
            "source_checked_at",
            "source_modified",
            "source_etag",
            "source_url",
        ):
            batch.drop_column(column)
