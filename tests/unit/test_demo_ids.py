"""``make run`` seeds the demo under random ids, drawn once per data folder."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tools.demo_ids import DEMO_IDS_FILE, persisted_demo_ids
from tools.seed_demo import FIXED_DEMO_IDS


def test_random_ids_are_drawn_once_and_reused_on_restart(tmp_path: Path) -> None:
    first = persisted_demo_ids(tmp_path / "data")
    again = persisted_demo_ids(tmp_path / "data")
    other = persisted_demo_ids(tmp_path / "other")
    assert first == again, "a restart must seed the same demo, not a second copy"
    assert first != other and first.dataset_id != first.application_id
    assert FIXED_DEMO_IDS.application_id not in (first.application_id, other.application_id)
    assert FIXED_DEMO_IDS.dataset_id not in (first.dataset_id, other.dataset_id)
    assert stat.S_IMODE((tmp_path / "data" / DEMO_IDS_FILE).stat().st_mode) == 0o600


def test_an_unreadable_id_file_stops_with_its_name(tmp_path: Path) -> None:
    (tmp_path / DEMO_IDS_FILE).write_text('{"dataset_id": "not-a-uuid"}')
    with pytest.raises(RuntimeError, match=DEMO_IDS_FILE):
        persisted_demo_ids(tmp_path)
