"""share link sites: which sites may show a share link's page in a frame (any, or only a list)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("application_access_token") as batch:
        batch.add_column(sa.Column("sites_limited", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("allowed_sites", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("application_access_token") as batch:
        batch.drop_column("allowed_sites")
        batch.drop_column("sites_limited")
