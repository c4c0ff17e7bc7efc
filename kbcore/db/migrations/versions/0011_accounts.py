"""accounts: users with roles and grants, their sessions, personal tokens and sign-in links,
and the audit trail of operator actions

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 01:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_account",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("username", sa.String(64), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(200), nullable=False, server_default=""),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("is_active", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_sign_in_at", sa.DateTime(), nullable=True),
    )
    op.create_table(
        "user_grant",
        sa.Column("user_id", sa.String(36), sa.ForeignKey("user_account.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("object_kind", sa.String(16), primary_key=True),
        sa.Column("object_id", sa.String(36), primary_key=True),
    )
    op.create_table(
        "user_token",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("user_id", sa.String(36), sa.ForeignKey("user_account.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(24), nullable=False, server_default=""),
        sa.Column("name", sa.String(100), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_user_token_user_id", "user_token", ["user_id"])
    op.create_table(
        "audit_event",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor_kind", sa.String(16), nullable=False),
        sa.Column("actor_id", sa.String(64), nullable=False, server_default=""),
        sa.Column("actor_name", sa.String(64), nullable=False, server_default=""),
        sa.Column("client_address", sa.String(64), nullable=False, server_default=""),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("object_kind", sa.String(32), nullable=False, server_default=""),
        sa.Column("object_id", sa.String(64), nullable=False, server_default=""),
        sa.Column("object_name", sa.String(200), nullable=False, server_default=""),
        sa.Column("detail", sa.String(500), nullable=False, server_default=""),
    )
    op.create_index("ix_audit_event_at", "audit_event", ["at"])


def downgrade() -> None:
    op.drop_index("ix_audit_event_at", table_name="audit_event")
    op.drop_table("audit_event")
    op.drop_index("ix_user_token_user_id", table_name="user_token")
    op.drop_table("user_token")
    op.drop_table("user_grant")
    op.drop_table("user_account")
