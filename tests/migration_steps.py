"""A database as it stood just before one migration: the test writes rows in the old format,
then runs the migration (and its way back) with alembic, as a deployment's upgrade would."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from kbcore.db.migrate import alembic_config


def database_before(tmp_path: Path, revision: str) -> tuple[sa.Engine, Config]:
    """A SQLite database at the revision before ``revision``, and the alembic config for it."""
    url = f"sqlite:///{tmp_path / f'before-{revision}.sqlite3'}"
    config = alembic_config(url)
    before = ScriptDirectory.from_config(config).get_revision(revision).down_revision
    assert isinstance(before, str)
    command.upgrade(config, before)
    return sa.create_engine(url), config
