"""record source: the chat routes or the OpenAI-compatible API

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 06:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_record") as batch:
        batch.add_column(sa.Column("source", sa.String(length=16), nullable=False, server_default="chat"))


def downgrade() -> None:
    with op.batch_alter_table("chat_record") as batch:
        batch.drop_column("source")
