"""embeddings per dataset: each dataset's embedding model and dimension, and the
jobs that re-embed a dataset when its model changes

Existing datasets stay on the deployment's default embedder (model id "", dimension 0 = the
default's), in the vector store they already use: nothing is moved or re-embedded.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dataset") as batch:
        batch.add_column(sa.Column("embedding_model_id", sa.String(length=36), nullable=False, server_default=""))
        batch.add_column(sa.Column("embedding_dimension", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("embedding_pending_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("embedding_error", sa.Text(), nullable=False, server_default=""))
    op.create_table(
        "embedding_job",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("dataset_id", sa.String(length=36), nullable=False),
        sa.Column("from_model_id", sa.String(length=36), nullable=False),
        sa.Column("from_dimension", sa.Integer(), nullable=False),
        sa.Column("to_model_id", sa.String(length=36), nullable=False),
        sa.Column("to_dimension", sa.Integer(), nullable=False),
        sa.Column("store_key", sa.String(length=300), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("lease_until", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["dataset.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_embedding_job_dataset_id", "embedding_job", ["dataset_id"])
    op.create_index("ix_embedding_job_state_created", "embedding_job", ["state", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_embedding_job_state_created", table_name="embedding_job")
    op.drop_index("ix_embedding_job_dataset_id", table_name="embedding_job")
    op.drop_table("embedding_job")
    with op.batch_alter_table("dataset") as batch:
        batch.drop_column("embedding_error")
        batch.drop_column("embedding_pending_id")
        batch.drop_column("embedding_dimension")
        batch.drop_column("embedding_model_id")
