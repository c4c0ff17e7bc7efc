"""Failures stored as English sentences before records kept words by code (migration 0016) are
recognised once and stored as words: a record's failure with its error id, a document's failure
after the words of a lead, a page check's note, a dataset's failed change of model; they then
read in Chinese. A sentence no catalogue of the time had stays as it was and reads as general
words, never as English to a Chinese reader; and the migration goes back down to the sentences."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command

from kbcore.db.stored_words import StoredWords
from kbcore.words.said import UNRECOGNISED, Said
from tests.migration_steps import database_before

REVISION = "0016"
NOW = dt.datetime(2026, 12, 6, 9, 0, 0)
WITH_ID = "the answer could not be saved because the database is unavailable; ask again shortly (error id 0123456789ab); the service log has the details"
STILL_SERVED = "'手册.pdf' is empty The previous version is still searchable."
NOTE = "the page at https://example.org/a answered 404 Not Found"
MODEL = "the change of embedding model was not made (cancelled by an operator); the dataset keeps its model"
STRANGER = "a sentence of some version nobody catalogued"


def _row(table: sa.Table, **given: Any) -> dict[str, Any]:
    """``given``, and a plain value for every other column that must have one."""
    plain = {sa.String: "", sa.Text: "", sa.Integer: 0, sa.Float: 0.0, sa.Boolean: False, sa.DateTime: NOW}
    row = dict(given)
    for column in table.columns:
        if column.name in row or column.nullable or column.server_default is not None:
            continue
        row[column.name] = next((v for kind, v in plain.items() if isinstance(column.type, kind)), "")
    return row


def _upgraded(tmp_path: Path) -> tuple[sa.Engine, Any]:
    engine, config = database_before(tmp_path, REVISION)
    meta = sa.MetaData()
    tables = {
        name: sa.Table(name, meta, autoload_with=engine)
        for name in ("dataset", "document", "chat", "chat_record", "application")
    }
    with engine.begin() as connection:
        connection.execute(
            sa.insert(tables["dataset"]), _row(tables["dataset"], id="ds1", name="库", embedding_error=MODEL)
        )
        for doc_id, error, note in (("d1", STILL_SERVED, NOTE), ("d2", STRANGER, "")):
            document = _row(tables["document"], id=doc_id, dataset_id="ds1", name=doc_id, error=error, source_note=note)
            connection.execute(sa.insert(tables["document"]), document)
        connection.execute(sa.insert(tables["application"]), _row(tables["application"], id="app1", name="应用"))
        connection.execute(sa.insert(tables["chat"]), _row(tables["chat"], id="c1", application_id="app1"))
        record = _row(tables["chat_record"], id=1, chat_id="c1", question="问", status="interrupted", error=WITH_ID)
        connection.execute(sa.insert(tables["chat_record"]), record)
    command.upgrade(config, "head")
    return engine, config


def _words(engine: sa.Engine, sql: str) -> Said | None:
    with engine.connect() as connection:
        stored = connection.execute(sa.text(sql)).scalar_one()
    read: Said | None = StoredWords().process_result_value(stored, engine.dialect)
    return read


def test_stored_sentences_become_words_that_read_in_both_languages(tmp_path: Path) -> None:
    engine, _ = _upgraded(tmp_path)
    record = _words(engine, "SELECT error FROM chat_record WHERE id = 1")
    assert record is not None and record.known()
    assert str(record) == WITH_ID
    assert record.values["error_id"] == "0123456789ab"
    assert record.render("zh").startswith("答案未能保存") or "0123456789ab" in record.render("zh")
    assert "database" not in record.render("zh") and "0123456789ab" in record.render("zh")

    document = _words(engine, "SELECT error FROM document WHERE id = 'd1'")
    assert document is not None and document.known() and str(document) == STILL_SERVED
    inner = document.values["failure"]
    assert isinstance(inner, Said) and inner.values["filename"] == "'手册.pdf'"
    assert "旧版本仍可检索" in document.render("zh") and "'手册.pdf'" in document.render("zh")

    note = _words(engine, "SELECT source_note FROM document WHERE id = 'd1'")
    assert note is not None and str(note) == NOTE and "https://example.org/a" in note.render("zh")
    model = _words(engine, "SELECT embedding_error FROM dataset WHERE id = 'ds1'")
    assert model is not None and str(model) == MODEL and "operator" not in model.render("zh")


def test_a_sentence_no_catalogue_had_is_kept_and_reads_as_unrecognised(tmp_path: Path) -> None:
    engine, _ = _upgraded(tmp_path)
    with engine.connect() as connection:
        kept = connection.execute(sa.text("SELECT error FROM document WHERE id = 'd2'")).scalar_one()
        empty = connection.execute(sa.text("SELECT source_note FROM document WHERE id = 'd2'")).scalar_one()
    assert kept == STRANGER and empty == ""
    read = _words(engine, "SELECT error FROM document WHERE id = 'd2'")
    assert read is not None and read.code == UNRECOGNISED and not read.known()


def test_the_migration_goes_back_down_to_the_sentences(tmp_path: Path) -> None:
    engine, config = _upgraded(tmp_path)
    command.downgrade(config, "0015")
    with engine.connect() as connection:
        errors: dict[str, str] = dict(connection.execute(sa.text("SELECT id, error FROM document")).tuples().all())
        record = connection.execute(sa.text("SELECT error FROM chat_record")).scalar_one()
    assert errors == {"d1": STILL_SERVED, "d2": STRANGER}
    assert record == WITH_ID
