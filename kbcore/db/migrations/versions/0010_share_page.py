"""share page: an application's page settings (prologue, sources shown, progress mode) and
chats a visitor deleted from their list (hidden from them, kept in the operator's log)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("application") as batch:
        batch.add_column(sa.Column("page_setting", sa.JSON(), nullable=False, server_default="{}"))
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("hidden_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chat") as batch:
        batch.drop_column("hidden_at")
    with op.batch_alter_table("application") as batch:
        batch.drop_column("page_setting")
