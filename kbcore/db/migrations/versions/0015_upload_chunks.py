"""upload chunks: an ingestion job's original file kept as rows of 1 MiB (read back one at a
time, deleted when the job ends) instead of one value on the job; and the reservations of the
deployment's upload budget

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

CHUNK = 1024 * 1024
ACTIVE = ("queued", "parsing", "embedding")
_JOBS = sa.table("ingest_job", sa.column("id", sa.String), sa.column("state", sa.String), sa.column("source"))
_CHUNKS = sa.table(
    "ingest_source_chunk", sa.column("job_id", sa.String), sa.column("seq", sa.Integer), sa.column("data")
)


def upgrade() -> None:
    op.create_table(
        "ingest_source_chunk",
        sa.Column("job_id", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["ingest_job.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("job_id", "seq"),
    )
    connection = op.get_bind()
    # A job still to run keeps its file, now in pieces (one file in memory at a time); an ended
    # job's file is needed by nothing (its document keeps the digest) and goes with the column.
    waiting = connection.execute(sa.select(_JOBS.c.id).where(_JOBS.c.state.in_(ACTIVE))).scalars().all()
    for job_id in waiting:
        source = bytes(connection.execute(sa.select(_JOBS.c.source).where(_JOBS.c.id == job_id)).scalar_one())
        for seq, start in enumerate(range(0, len(source), CHUNK)):
            connection.execute(sa.insert(_CHUNKS).values(job_id=job_id, seq=seq, data=source[start : start + CHUNK]))
    with op.batch_alter_table("ingest_job") as batch:
        batch.drop_column("source")
    op.create_table(
        "upload_reservation",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("caller", sa.String(length=80), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_upload_reservation_expires_at", "upload_reservation", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_upload_reservation_expires_at", table_name="upload_reservation")
    op.drop_table("upload_reservation")
    with op.batch_alter_table("ingest_job") as batch:
        # Only the jobs still to run need their file back; an ended one's stays empty.
        batch.add_column(sa.Column("source", sa.LargeBinary(), nullable=True))
    connection = op.get_bind()
    jobs = connection.execute(sa.select(_CHUNKS.c.job_id).distinct()).scalars().all()
    for job_id in jobs:
        pieces = connection.execute(
            sa.select(_CHUNKS.c.data).where(_CHUNKS.c.job_id == job_id).order_by(_CHUNKS.c.seq)
        ).scalars()
        source = b"".join(bytes(piece) for piece in pieces)
        connection.execute(sa.update(_JOBS).where(_JOBS.c.id == job_id).values(source=source))
    op.drop_table("ingest_source_chunk")
