"""Shard folders of the edge store: sparse copies stay sparse and equal, the pointer file names
the generation in use, and leftovers of an interrupted maintenance run are found and removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from services.retrieval.store import shard_files

MB = 1 << 20


def sparse_file(path: Path, size: int, data: dict[int, bytes]) -> None:
    with path.open("wb") as handle:
        for offset, chunk in data.items():
            handle.seek(offset)
            handle.write(chunk)
        handle.truncate(size)


def test_a_copy_has_the_same_bytes_and_stays_sparse(tmp_path: Path) -> None:
    source = tmp_path / "edge"
    (source / "segments" / "a").mkdir(parents=True)
    sparse_file(source / "segments" / "a" / "page_0.dat", 32 * MB, {0: b"head", 5 * MB: b"middle" * 1000})
    (source / "edge_config.json").write_text('{"vectors": {}}', encoding="utf-8")
    (source / "empty").write_bytes(b"")

    shard_files.copy_shard(source, tmp_path / "copy")

    copied = tmp_path / "copy" / "segments" / "a" / "page_0.dat"
    assert copied.read_bytes() == (source / "segments" / "a" / "page_0.dat").read_bytes()
    assert (tmp_path / "copy" / "edge_config.json").read_text(encoding="utf-8") == '{"vectors": {}}'
    assert (tmp_path / "copy" / "empty").read_bytes() == b""
    if hasattr(os, "SEEK_DATA"):
        assert copied.stat().st_blocks * 512 < 4 * MB  # holes were not written out


def test_the_pointer_names_the_current_generation(tmp_path: Path) -> None:
    path = tmp_path / "qdrant-edge"
    path.mkdir()
    assert shard_files.current_folder(path) == path
    generation = shard_files.next_generation(path)
    assert generation.name == "qdrant-edge.g1"
    generation.mkdir()
    shard_files.commit(path, generation)
    assert shard_files.current_folder(path) == generation
    assert shard_files.next_generation(path).name == "qdrant-edge.g2"


def test_a_pointer_to_something_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "qdrant-edge"
    (tmp_path / "elsewhere").mkdir()
    shard_files.pointer(path).write_text("elsewhere\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a shard generation"):
        shard_files.current_folder(path)


def test_stale_folders_go_and_the_current_one_and_other_stores_stay(tmp_path: Path) -> None:
    path = tmp_path / "qdrant-edge"
    for name in ("qdrant-edge", "qdrant-edge.g1", "qdrant-edge.g2", "qdrant-edge.build", "qdrant-edge-m3-1024"):
        (tmp_path / name).mkdir()
    shard_files.commit(path, tmp_path / "qdrant-edge.g2")

    removed = shard_files.remove_stale(path)

    assert {p.name for p in removed} == {"qdrant-edge", "qdrant-edge.g1", "qdrant-edge.build"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "qdrant-edge-m3-1024",
        "qdrant-edge.current",
        "qdrant-edge.g2",
    ]
