"""Alembic environment: migrations run on a synchronous engine built from the given URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from kbcore.db.tables import Base

config = context.config


def run_migrations() -> None:
    engine = create_engine(config.attributes["url"], poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations()
