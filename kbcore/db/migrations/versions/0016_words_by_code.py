"""words by code: the failures and notes records keep, stored as a message's code and values
(JSON) instead of an English sentence; each stored sentence is recognised once against the
catalogue of its time (``kbcore/db/migrations/legacy_words.py``); one it cannot recognise is kept
as it was and reads as general words with an error id

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07 22:00:00
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from kbcore.db.migrations.legacy_words import legacy_words

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

# (table, its key, the columns that hold words a person reads)
COLUMNS = (
    ("chat_record", "id", ("error",)),
    ("document", "id", ("error", "source_note")),
    ("dataset", "id", ("embedding_error",)),
    ("ingest_job", "id", ("error",)),
    ("embedding_job", "id", ("error",)),
)
BATCH = 500


def upgrade() -> None:
    _each_column(_convert)


def downgrade() -> None:
    _each_column(_back)


def _each_column(change: Callable[[sa.Connection, sa.TableClause, str, str], None]) -> None:
    connection = op.get_bind()
    for table_name, key, columns in COLUMNS:
        for column in columns:
            change(connection, sa.table(table_name, sa.column(key), sa.column(column, sa.Text)), key, column)


def _convert(connection: sa.Connection, table: sa.TableClause, key: str, column: str) -> None:
    """Each non-empty sentence of ``column`` as words, where recognised, a batch at a time."""
    after: object = None  # the last key of the batch before (keys are text or integers)
    while True:
        query = sa.select(table.c[key], table.c[column]).where(table.c[column] != "")
        if after is not None:
            query = query.where(table.c[key] > after)
        rows = connection.execute(query.order_by(table.c[key]).limit(BATCH)).all()
        if not rows:
            return
        for row_key, sentence in rows:
            words = None if sentence.startswith("{") else legacy_words(sentence)
            if words is not None:
                connection.execute(sa.update(table).where(table.c[key] == row_key).values({column: words.as_json()}))
        after = rows[-1][0]


def _back(connection: sa.Connection, table: sa.TableClause, key: str, column: str) -> None:
    """Words back to their English sentence, for the code before this revision."""
    from kbcore.words.said import Said

    rows = connection.execute(sa.select(table.c[key], table.c[column]).where(table.c[column].like("{%"))).all()
    for row_key, stored in rows:
        try:
            sentence = str(Said.from_json(stored))
        except ValueError:
            continue
        connection.execute(sa.update(table).where(table.c[key] == row_key).values({column: sentence}))
