"""Datasets made before embeddings per dataset (migration 0009) stay on the deployment's default
embedder, in the store they already use: no model, the default's dimension, no change running;
the spaces put them in the default space, and the migration goes back down cleanly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import alembic_config
from kbcore.db.tables import Dataset
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.embedding.registered import EmbeddingModels
from services.retrieval.embedding.spaces import EmbeddingSpaces, Space
from services.retrieval.store.base import VectorStore


async def test_existing_datasets_stay_on_the_default_embedder(
    tmp_path: Path, store: VectorStore, embedder: Embedder
) -> None:
    url = f"sqlite:///{tmp_path / 'before-0009.sqlite3'}"
    config = alembic_config(url)
    command.upgrade(config, "0008")
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            sa.text("INSERT INTO dataset (id, name, description, created_at) VALUES ('d1', '旧库', '', :now)"),
            {"now": dt.datetime(2026, 11, 29, 12, 0, 0)},
        )
    command.upgrade(config, "head")
    with engine.connect() as connection:
        row = connection.execute(sa.select(Dataset)).one()
        stored_error = connection.execute(sa.text("SELECT embedding_error FROM dataset")).scalar_one()
    assert (row.embedding_model_id, row.embedding_dimension, row.embedding_pending_id, row.embedding_error) == (
        "",
        0,
        None,
        None,  # no words: stored as "", not NULL
    )
    assert stored_error == ""

    async_engine = create_engine(url)
    sessions = session_factory(async_engine)
    default = Space("", 384, embedder, store, calibrated=True)
    spaces = EmbeddingSpaces(sessions, default, EmbeddingModels(sessions, Settings(data_dir=tmp_path)))
    assert await spaces.served("d1") is default
    assert await spaces.for_datasets(["d1"]) is default
    await async_engine.dispose()

    command.downgrade(config, "0008")
    with engine.connect() as connection:
        columns = {c["name"] for c in sa.inspect(connection).get_columns("dataset")}
        tables = sa.inspect(connection).get_table_names()
    engine.dispose()
    assert "embedding_model_id" not in columns and "embedding_job" not in tables
