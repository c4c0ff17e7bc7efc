"""Settings: defaults and ranges, clamping, loud failures, and the table in docs/operations.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbcore.settings import Settings, SettingsError, markdown_table


def test_defaults_of_the_loop_and_context_budgets() -> None:
    s = Settings.from_env({})
    assert (s.agent_max_rounds, s.agent_evidence_tokens, s.context_recent_tokens) == (3, 16000, 6000)


@pytest.mark.parametrize(
    ("env", "field", "expected"),
    [
        ({"KB_AGENT_MAX_ROUNDS": "0"}, "agent_max_rounds", 1),
        ({"KB_AGENT_MAX_ROUNDS": "99"}, "agent_max_rounds", 6),
        ({"KB_AGENT_EVIDENCE_TOKENS": "10"}, "agent_evidence_tokens", 1000),
        ({"KB_AGENT_EVIDENCE_TOKENS": "50000"}, "agent_evidence_tokens", 24000),
        ({"KB_CONTEXT_RECENT_TOKENS": "100"}, "context_recent_tokens", 512),
        ({"KB_CONTEXT_RECENT_TOKENS": "99999"}, "context_recent_tokens", 16000),
        ({"KB_CONTEXT_RECENT_TOKENS": "7000"}, "context_recent_tokens", 7000),
    ],
)
def test_out_of_range_numbers_are_clamped(env: dict[str, str], field: str, expected: int) -> None:
    assert getattr(Settings.from_env(env), field) == expected


def test_unreadable_value_fails_loudly_naming_the_variable() -> None:
    with pytest.raises(SettingsError, match="KB_AGENT_MAX_ROUNDS"):
        Settings.from_env({"KB_AGENT_MAX_ROUNDS": "three"})
    with pytest.raises(SettingsError, match="KB_MODEL_DISABLE_THINKING"):
        Settings.from_env({"KB_MODEL_DISABLE_THINKING": "maybe"})


def test_sqlite_is_the_default_database_under_the_data_dir() -> None:
    s = Settings.from_env({"KB_DATA_DIR": "/tmp/x"})
    assert s.resolved_database_url() == "sqlite:////tmp/x/kb.sqlite3"
    assert Settings.from_env({"KB_DATABASE_URL": "postgresql://h/db"}).resolved_database_url() == "postgresql://h/db"


def test_targets_default_to_host_and_port_and_can_name_a_balanced_dns_target() -> None:
    s = Settings.from_env({"KB_RETRIEVAL_TARGET": "dns:///retrieval:50052"})
    assert s.target("retrieval") == "dns:///retrieval:50052"
    assert s.target("chat") == "127.0.0.1:50053"


def test_operations_doc_settings_table_is_the_generated_one() -> None:
    operations = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    assert markdown_table() in operations, (
        "docs/operations.md's settings table is stale: paste `python -m kbcore.settings` under its Settings heading"
    )
