"""The service credential: one secret for the processes sharing a data folder (or the configured
one), a value that can travel as call metadata, compared as a whole, and a channel cannot be
opened without it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE as OPERATOR_TOKEN_FILE
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import LOCAL_TOKEN_FILE, METADATA_KEY, presents, service_credential
from kbcore.settings import Settings


def test_the_local_credential_is_one_private_file_shared_by_the_data_folder(tmp_path: Path) -> None:
    first = service_credential(Settings(data_dir=tmp_path))
    assert service_credential(Settings(data_dir=tmp_path)) == first and len(first) == 64
    assert stat.S_IMODE((tmp_path / LOCAL_TOKEN_FILE).stat().st_mode) == 0o600
    assert service_credential(Settings(data_dir=tmp_path / "other")) != first, "another folder, another secret"
    assert operator_token(Settings(data_dir=tmp_path)) != first, "not the operator's token"
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == sorted([LOCAL_TOKEN_FILE, OPERATOR_TOKEN_FILE])


def test_a_configured_credential_wins_and_must_be_sendable(tmp_path: Path) -> None:
    assert service_credential(Settings(data_dir=tmp_path, service_token="s3cret-0123")) == "s3cret-0123"
    assert not (tmp_path / LOCAL_TOKEN_FILE).exists()
    for unsendable in ("with space", "非ASCII", "tab\there"):
        with pytest.raises(ValueError, match=r"^KB_SERVICE_TOKEN must be printable ASCII"):
            service_credential(Settings(data_dir=tmp_path, service_token=unsendable))


def test_only_the_whole_credential_under_its_own_key_is_accepted() -> None:
    assert presents(((METADATA_KEY, "abc"),), "abc")
    for metadata in (
        (),
        None,
        ((METADATA_KEY, "ab"),),
        ((METADATA_KEY, "abcd"),),
        (("authorization", "abc"),),
        ((METADATA_KEY + "-bin", b"abc"),),
    ):
        assert not presents(metadata, "abc"), metadata


def test_a_channel_cannot_be_opened_without_a_credential() -> None:
    with pytest.raises(ValueError, match="needs the service credential"):
        open_channel("127.0.0.1:1", "")
