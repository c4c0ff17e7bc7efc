"""Jobs queued before an upload's bytes were kept in pieces (migration 0015) keep their file, cut
into 1 MiB rows in order, so the worker reads back exactly what was uploaded; a job that had
already ended drops its file with the old column; and the migration goes back down with the
queued file whole again."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from tests.migration_steps import database_before

REVISION = "0015"
NOW = dt.datetime(2026, 12, 4, 12, 0, 0)
WAITING = os.urandom(2 * 1024 * 1024 + 12345)  # three pieces, the last a short one


def _job(job_id: str, state: str, source: bytes) -> dict[str, object]:
    return {
        "id": job_id,
        "document_id": "doc1",
        "dataset_id": "ds1",
        "store_key": "edge",
        "version": 1,
        "state": state,
        "filename": f"{job_id}.pdf",
        "source_type": "pdf",
        "source": source,
        "done": 0,
        "total": 0,
        "attempts": 0,
        "cancel_requested": False,
        "error": "",
        "created_at": NOW,
        "updated_at": NOW,
    }


def test_a_queued_jobs_file_is_kept_in_pieces_and_an_ended_jobs_is_dropped(tmp_path: Path) -> None:
    engine, config = database_before(tmp_path, REVISION)
    jobs = sa.Table("ingest_job", sa.MetaData(), autoload_with=engine)
    with engine.begin() as connection:
        connection.execute(
            sa.text("INSERT INTO dataset (id, name, description, created_at) VALUES ('ds1', '库', '', :now)"),
            {"now": NOW},
        )
        connection.execute(
            sa.text(
                "INSERT INTO document (id, dataset_id, name, content_hash, paragraph_count, char_length, created_at,"
                " status, error, active_version, source_type, source_hash, updated_at)"
                " VALUES ('doc1', 'ds1', '手册', '', 0, 0, :now, 'queued', '', 0, 'pdf', '', :now)"
            ),
            {"now": NOW},
        )
        connection.execute(sa.insert(jobs), [_job("waiting", "queued", WAITING), _job("done", "ready", b"%PDF-old")])

    command.upgrade(config, "head")
    with engine.connect() as connection:
        pieces = connection.execute(
            sa.text("SELECT job_id, seq, length(data) FROM ingest_source_chunk ORDER BY job_id, seq")
        ).all()
        stored = b"".join(
            connection.execute(
                sa.text("SELECT data FROM ingest_source_chunk WHERE job_id = 'waiting' ORDER BY seq")
            ).scalars()
        )
        columns = {c["name"] for c in sa.inspect(connection).get_columns("ingest_job")}
    assert [(job, seq) for job, seq, _ in pieces] == [("waiting", 0), ("waiting", 1), ("waiting", 2)], pieces
    assert [size for _, _, size in pieces] == [1024 * 1024, 1024 * 1024, 12345]
    assert stored == WAITING
    assert "source" not in columns

    command.downgrade(config, "0014")
    with engine.connect() as connection:
        sources: dict[str, bytes | None] = {
            job: source for job, source in connection.execute(sa.text("SELECT id, source FROM ingest_job")).all()
        }
        tables = sa.inspect(connection).get_table_names()
    engine.dispose()
    assert sources["waiting"] == WAITING and sources["done"] is None, {k: (v or b"")[:10] for k, v in sources.items()}
    assert "ingest_source_chunk" not in tables and "upload_reservation" not in tables
