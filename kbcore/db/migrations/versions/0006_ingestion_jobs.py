"""ingestion jobs: document status and versions, and the job queue with its original files

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 09:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("document") as batch:
        # Documents indexed before jobs existed are served as version 0 and are ready.
        batch.add_column(sa.Column("status", sa.String(length=16), nullable=False, server_default="ready"))
        batch.add_column(sa.Column("error", sa.Text(), nullable=False, server_default=""))
        batch.add_column(sa.Column("active_version", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("job_id", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("source_type", sa.String(length=16), nullable=False, server_default=""))
        batch.add_column(sa.Column("source_hash", sa.String(length=64), nullable=False, server_default=""))
        batch.add_column(
            sa.Column("updated_at", sa.DateTime(), nullable=False, server_default=sa.text("CURRENT_TIMESTAMP"))
        )
    op.create_table(
        "ingest_job",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("document_id", sa.String(length=36), nullable=False),
        sa.Column("dataset_id", sa.String(length=36), nullable=False),
        sa.Column("store_key", sa.String(length=300), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("filename", sa.String(length=300), nullable=False),
        sa.Column("source_type", sa.String(length=16), nullable=False),
        sa.Column("source", sa.LargeBinary(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=True),
        sa.Column("lease_until", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["document_id"], ["document.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_ingest_job_document_id", "ingest_job", ["document_id"])
    op.create_index("ix_ingest_job_state_created", "ingest_job", ["state", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_ingest_job_state_created", table_name="ingest_job")
    op.drop_index("ix_ingest_job_document_id", table_name="ingest_job")
    op.drop_table("ingest_job")
    with op.batch_alter_table("document") as batch:
        for column in ("updated_at", "source_hash", "source_type", "job_id", "active_version", "error", "status"):
            batch.drop_column(column)
