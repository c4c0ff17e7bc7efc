"""token end reason: why a session or personal token ended (signed out, a password reset, a role
change …), so its next use is refused with a sentence that says why

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_token") as batch:
        batch.add_column(sa.Column("ended_by", sa.String(24), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("user_token") as batch:
        batch.drop_column("ended_by")
