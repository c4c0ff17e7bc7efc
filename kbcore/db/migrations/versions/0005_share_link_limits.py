"""share-link limits: a link-wide daily cap and fixed-window counters

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 07:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("application_access_token") as batch:
        batch.add_column(sa.Column("daily_cap", sa.Integer(), nullable=False, server_default="1000"))
    op.create_table(
        "rate_window",
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("window", sa.String(length=16), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("key", "window"),
    )


def downgrade() -> None:
    op.drop_table("rate_window")
    with op.batch_alter_table("application_access_token") as batch:
        batch.drop_column("daily_cap")
