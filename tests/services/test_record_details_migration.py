"""Records saved before details became the typed RecordDetails message still read exactly as
they did: migration 0003 rewrites their details and drops the duplicated problem_text column."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command

from gateway.presenter import export_row, record_out
from kbcore.db.migrate import alembic_config
from kbcore.db.tables import ChatRecord
from services.chat.chat_messages import record_message

PARAGRAPH = {
    "id": "p1",
    "dataset_id": "d1",
    "document_id": "doc1",
    "document_name": "年假制度",
    "title": "三、年休假",
    "content": "员工入职满一年后每年享有5天带薪年休假。",
    "similarity": 0.0328,
    "round": 1,
}
ROUND = {
    "round": 1,
    "queries": ["年假有几天"],
    "new_paragraph_ids": ["p1"],
    "total_evidence": 1,
    "sufficient": True,
    "missing": "",
    "next_queries": [],
}
CONTEXT = {
    "enabled": True,
    "recent_rounds": 1,
    "compacted_rounds": 0,
    "revision": 0,
    "token_budget": 6000,
    "estimated_tokens": 42,
}
# What the chat service stored before revision 0003: the HTTP shape itself.
OLD_DETAILS: dict[str, Any] = {
    "problem_text": "员工年假有几天？",
    "agent_trace": [ROUND],
    "agent_stop_reason": "sufficient",
    "sufficient": True,
    "missing": "",
    "rewrite_error": "",
    "paragraph_list": [PARAGRAPH],
    "context_info": CONTEXT,
    "search_step": {"step_type": "iterative_search", "run_time": 0.125},
    "chat_step": {
        "model": "offline-extractive",
        "offline_model": True,
        "message_tokens": 80,
        "answer_tokens": 20,
        "run_time": 0.5,
    },
}
# A question that failed before retrieval ran.
OLD_FAILED: dict[str, Any] = {
    "problem_text": "",
    "agent_trace": [],
    "agent_stop_reason": "",
    "sufficient": False,
    "missing": "",
    "rewrite_error": "",
    "paragraph_list": [],
    "context_info": {},
    "search_step": {"step_type": "iterative_search", "run_time": 0.0},
    "chat_step": {
        "model": "offline-extractive",
        "offline_model": True,
        "message_tokens": 0,
        "answer_tokens": 0,
        "run_time": 0.01,
    },
}


def _insert_old_records(engine: sa.Engine) -> None:
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
        for record_id, status, problem_text, details, tokens in (
            (1, "answered", "员工年假有几天？", OLD_DETAILS, (80, 20)),
            (2, "failed", "年假？", OLD_FAILED, (0, 0)),
        ):
            connection.execute(
                sa.text(
                    "INSERT INTO chat_record (id, chat_id, question, answer, status, problem_text, details,"
                    " message_tokens, answer_tokens, error, run_time, holder, in_history, created_at, updated_at)"
                    " VALUES (:id, 'c1', :question, 'answer', :status, :problem_text, :details, :message_tokens,"
                    " :answer_tokens, '', 0.5, '', true, :now, :now)"
                ),
                {
                    "id": record_id,
                    "question": "年假？",
                    "status": status,
                    "problem_text": problem_text,
                    "details": json.dumps(details, ensure_ascii=False),
                    "message_tokens": tokens[0],
                    "answer_tokens": tokens[1],
                    "now": now,
                },
            )


def test_old_records_read_as_before_after_the_migration(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'before-0003.sqlite3'}"
    config = alembic_config(url)
    command.upgrade(config, "0002")
    engine = sa.create_engine(url)
    _insert_old_records(engine)
    command.upgrade(config, "head")
    with engine.connect() as connection:
        rows = connection.execute(sa.select(ChatRecord).order_by(ChatRecord.id)).all()
    engine.dispose()
    answered, failed = (record_message(ChatRecord(**row._mapping)) for row in rows)

    shown = record_out(answered).wire()
    assert shown["padding_problem_text"] == "员工年假有几天？"
    for key in ("agent_trace", "agent_stop_reason", "sufficient", "context_info", "search_step"):
        expected = OLD_DETAILS[key]
        assert shown[key] == expected, key
    # Fields added since read with their defaults: no dataset name was kept then.
    assert shown["paragraph_list"] == [{**PARAGRAPH, "dataset_name": "", "is_active": True, "meta": {}}]
    assert shown["chat_step"] == OLD_DETAILS["chat_step"]
    assert export_row(answered)["stop_reason"] == "sufficient" and export_row(answered)["rounds"] == 1

    never_retrieved = record_out(failed).wire()
    assert never_retrieved["padding_problem_text"] == "" and never_retrieved["agent_stop_reason"] == ""
    assert never_retrieved["context_info"] == {} and never_retrieved["chat_step"] == OLD_FAILED["chat_step"]
