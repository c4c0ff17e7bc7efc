"""Records saved before the log's filter columns existed get them from their details when the
database is upgraded (migration 0007): stop reason, sufficient (None where retrieval never ran)
and rounds; the source is known only for the OpenAI endpoint, the rest stay unknown ("")."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command

from kbcore.db.migrate import alembic_config
from kbcore.db.tables import ChatRecord

ROUND = {"round": 1, "queries": ["年假有几天"], "new_paragraph_ids": ["p1"], "total_evidence": 1, "sufficient": True}
# RecordDetails JSON as the chat service stored it at revision 0006 (default values omitted).
SUFFICIENT: dict[str, Any] = {
    "retrieval": {
        "problem_text": "员工年假有几天？",
        "rounds": [ROUND, {**ROUND, "round": 2}],
        "stop_reason": "STOP_REASON_SUFFICIENT",
        "sufficient": True,
    },
    "chat": {"model": "offline-extractive", "offline_model": True, "run_time": 0.5},
}
INSUFFICIENT: dict[str, Any] = {
    "retrieval": {"rounds": [ROUND, ROUND, ROUND], "stop_reason": "STOP_REASON_MAX_ROUNDS", "missing": "报销标准"},
    "chat": {"model": "offline-extractive"},
}
NEVER_RETRIEVED: dict[str, Any] = {"chat": {"model": "offline-extractive", "run_time": 0.01}}
# id: (details, source)
EXTRA = 1005  # the backfill reads 1000 at a time: these make it read more than one batch
RECORDS: dict[int, tuple[dict[str, Any] | str, str]] = {
    1: (SUFFICIENT, "chat"),
    2: (INSUFFICIENT, "openai_api"),
    3: (NEVER_RETRIEVED, "chat"),
    4: ("{}", "chat"),
}


def _insert(engine: sa.Engine, count_extra: int) -> None:
    now = dt.datetime(2026, 11, 29, 12, 0, 0)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                "INSERT INTO application (id, name, description, dataset_ids, dialogue_number, search_setting,"
                " model_setting, created_at, updated_at) VALUES ('a1', 'app', '', '[]', 5, '{}', '{}', :now, :now)"
            ),
            {"now": now},
        )
        connection.execute(
            sa.text(
                "INSERT INTO chat (id, application_id, abstract, created_at, updated_at) VALUES ('c1', 'a1', '', :now, :now)"
            ),
            {"now": now},
        )
        rows = [(i, d, s) for i, (d, s) in RECORDS.items()]
        rows += [(100 + i, SUFFICIENT, "chat") for i in range(count_extra)]  # more than one batch
        for record_id, details, source in rows:
            connection.execute(
                sa.text(
                    "INSERT INTO chat_record (id, chat_id, question, answer, status, details, source, message_tokens,"
                    " answer_tokens, error, run_time, holder, in_history, created_at, updated_at)"
                    " VALUES (:id, 'c1', '年假？', 'answer', 'answered', :details, :source, 0, 0, '', 0.5, '', true, :now, :now)"
                ),
                {
                    "id": record_id,
                    "details": details if isinstance(details, str) else json.dumps(details),
                    "source": source,
                    "now": now,
                },
            )


def test_the_upgrade_fills_the_log_columns_from_old_records(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'before-0007.sqlite3'}"
    config = alembic_config(url)
    command.upgrade(config, "0006")
    engine = sa.create_engine(url)
    _insert(engine, count_extra=EXTRA)
    command.upgrade(config, "head")
    with engine.connect() as connection:
        rows = {r.id: r for r in connection.execute(sa.select(ChatRecord)).all()}
    engine.dispose()

    columns = {i: (rows[i].stop_reason, rows[i].sufficient, rows[i].rounds, rows[i].log_source) for i in RECORDS}
    assert columns == {
        1: ("sufficient", True, 2, ""),
        2: ("max_rounds", False, 3, "openai_api"),
        3: ("", None, 0, ""),
        4: ("", None, 0, ""),
    }
    assert all(rows[100 + i].stop_reason == "sufficient" and rows[100 + i].rounds == 2 for i in range(EXTRA))
    assert all(row.caller_ref == "" for row in rows.values())
