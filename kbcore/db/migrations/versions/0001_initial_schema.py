"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 19:21:07.560249
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """The tables in dependency order, each with its indexes."""
    _create_application()
    _create_chat_lock()
    _create_dataset()
    _create_chat()
    _create_document()
    _create_chat_context_state()
    _create_chat_record()


def _create_application() -> None:
    op.create_table(
        "application",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("dataset_ids", sa.JSON(), nullable=False),
        sa.Column("dialogue_number", sa.Integer(), nullable=False),
        sa.Column("search_setting", sa.JSON(), nullable=False),
        sa.Column("model_setting", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def _create_chat_lock() -> None:
    op.create_table(
        "chat_lock",
        sa.Column("chat_id", sa.String(length=36), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("acquired_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("chat_id"),
    )
    with op.batch_alter_table("chat_lock", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chat_lock_expires_at"), ["expires_at"], unique=False)


def _create_dataset() -> None:
    op.create_table(
        "dataset",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def _create_chat() -> None:
    op.create_table(
        "chat",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("application_id", sa.String(length=36), nullable=False),
        sa.Column("visitor_id", sa.String(length=64), nullable=True),
        sa.Column("abstract", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["application_id"], ["application.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("chat", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chat_application_id"), ["application_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chat_visitor_id"), ["visitor_id"], unique=False)


def _create_document() -> None:
    op.create_table(
        "document",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("dataset_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("paragraph_count", sa.Integer(), nullable=False),
        sa.Column("char_length", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["dataset.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dataset_id", "name", name="uq_document_dataset_name"),
    )
    with op.batch_alter_table("document", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_document_dataset_id"), ["dataset_id"], unique=False)


def _create_chat_context_state() -> None:
    op.create_table(
        "chat_context_state",
        sa.Column("chat_id", sa.String(length=36), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("through_record_id", sa.BigInteger(), nullable=False),
        sa.Column("compacted_rounds", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["chat_id"], ["chat.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chat_id"),
    )


def _create_chat_record() -> None:
    op.create_table(
        "chat_record",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.String(length=36), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("problem_text", sa.Text(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("message_tokens", sa.Integer(), nullable=False),
        sa.Column("answer_tokens", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("run_time", sa.Float(), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("in_history", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["chat_id"], ["chat.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("chat_record", schema=None) as batch_op:
        batch_op.create_index("ix_chat_record_chat_id_id", ["chat_id", "id"], unique=False)


def downgrade() -> None:
    # ### commands auto generated by Alembic - please adjust! ###
    with op.batch_alter_table("chat_record", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_record_chat_id_id")

    op.drop_table("chat_record")
    op.drop_table("chat_context_state")
    with op.batch_alter_table("document", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_document_dataset_id"))

    op.drop_table("document")
    with op.batch_alter_table("chat", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_visitor_id"))
        batch_op.drop_index(batch_op.f("ix_chat_application_id"))

    op.drop_table("chat")
    op.drop_table("dataset")
    with op.batch_alter_table("chat_lock", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_lock_expires_at"))

    op.drop_table("chat_lock")
    op.drop_table("application")
    # ### end Alembic commands ###
