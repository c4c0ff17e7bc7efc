"""A process announces the port it bound in KB_RUN_DIR, and only when a launcher asked for it."""

from __future__ import annotations

from pathlib import Path

from kbcore.rpc.service_main import announce_port
from kbcore.settings import Settings


def test_the_port_is_written_to_the_run_folder_the_settings_name(tmp_path: Path) -> None:
    announce_port(Settings.from_env({"KB_RUN_DIR": str(tmp_path)}), "chat", 50123)
    assert (tmp_path / "chat.port").read_text() == "50123"
    assert not list(tmp_path.glob("*.tmp")), "the partial file is renamed into place"


def test_without_a_run_folder_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    announce_port(Settings.from_env({}), "chat", 50123)
    assert not list(tmp_path.iterdir())
