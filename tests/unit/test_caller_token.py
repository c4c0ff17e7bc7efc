"""The local operator token: every process sharing the data folder reads the same, complete token,
even when they all start at once."""

from __future__ import annotations

import multiprocessing
import stat
from pathlib import Path

from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE, bearer, operator_token, token_in
from kbcore.settings import Settings


def _read(folder: str) -> str:
    return operator_token(Settings(data_dir=Path(folder)))


def test_processes_starting_together_all_read_one_complete_token(tmp_path: Path) -> None:
    for attempt in range(5):
        folder = tmp_path / f"data{attempt}"
        # spawn, not fork: forking a process that runs gRPC threads (the rest of the suite) can hang.
        with multiprocessing.get_context("spawn").Pool(8) as pool:
            tokens = pool.map(_read, [str(folder)] * 16)
        assert len(set(tokens)) == 1 and len(tokens[0]) == 48, tokens
        assert stat.S_IMODE((folder / LOCAL_TOKEN_FILE).stat().st_mode) == 0o600
        assert [p.name for p in folder.iterdir()] == [LOCAL_TOKEN_FILE], "no drafts left behind"


def test_a_configured_token_wins_and_metadata_round_trips(tmp_path: Path) -> None:
    assert operator_token(Settings(data_dir=tmp_path, admin_token="s3cret")) == "s3cret"
    assert not (tmp_path / LOCAL_TOKEN_FILE).exists()
    assert token_in(bearer("abc")) == "abc"
    assert token_in((("authorization", "Basic abc"),)) == ""
