"""Bring a database to the newest schema: ``python -m kbcore.db.migrate`` (run once per deploy)."""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config

from kbcore.db.engine import sync_url
from kbcore.db.sqlite_files import convert_to_incremental, prepare_sqlite_files
from kbcore.process.private_paths import private_folder
from kbcore.settings import Settings

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = sync_url(url)
    return config


def upgrade(url: str) -> None:
    """The newest schema; a SQLite database also gets private files and, once, incremental vacuum."""
    prepare_sqlite_files(url)
    command.upgrade(alembic_config(url), "head")
    if convert_to_incremental(url):
        logging.getLogger(__name__).info("the SQLite database now gives the space of deleted data back")


if __name__ == "__main__":
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level)
    private_folder(settings.data_dir)
    upgrade(settings.resolved_database_url())
    logging.getLogger(__name__).info("database is at the newest schema")
