"""The embedded store on a full disk, in this very process: a mapped write the filesystem cannot
back is a SIGBUS, which would end the test run itself (before, an upsert on the full tmpfs and
an open of a shard there both did). Writes are refused before they touch a mapped file, the drop
of a failed version's staged points waits for room, a store opened on a full disk serves from a
read-only copy, and all of it goes back to normal by itself once space is back.

The store's folder is a real 192 MiB tmpfs (``mount -t tmpfs``, as root) with the default
reserve (64 MiB); where mounting is refused, its ``statvfs`` is injected instead (the test prints
which). Vectors are random: what is tested is where the points go, not how they rank.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import kbcore.process.disk_space as disk_space
from kbcore.errors import StorageFull
from kbcore.process.disk_space import DiskSpace, MiB, filesystem_type
from services.retrieval.store.base import ParagraphPoint, SearchMode, SearchQuery
from services.retrieval.store.edge_store import DEFAULT_RESERVE_BYTES, EdgeVectorStore
from services.retrieval.store.shard_space import scratch_name, scratch_places
from tests.full_disk import InjectedDisk, RealDisk, mount_tmpfs, unmount

DIMENSION = 384
SIZE = "192m"


def points(count: int, document_id: str, version: int = 0, searchable: bool = True) -> list[ParagraphPoint]:
    rng = random.Random(f"{document_id}:{version}")
    return [
        ParagraphPoint(
            id=str(uuid.uuid5(uuid.UUID(document_id), f"{version}:{i}")),
            dataset_id="ds",
            document_id=document_id,
            document_name="巡检规定",
            title=f"第{i}条",
            content=f"第{i}号设备每{i % 30 + 1}天巡检一次，记录温度和压力。",
            position=i,
            vector=[rng.random() for _ in range(DIMENSION)],
            version=version,
            searchable=searchable,
        )
        for i in range(count)
    ]


SEARCH = SearchQuery(("ds",), "巡检", [0.5] * DIMENSION, SearchMode.HYBRID, 5, 0.0)


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, RealDisk | InjectedDisk]]:
    where = tmp_path / "edge"
    mounted = mount_tmpfs(where, SIZE)
    print(f"\nstore disk: {'a real 192 MiB tmpfs' if mounted else InjectedDisk.method}")
    try:
        yield where, RealDisk(where, "192 MiB") if mounted else InjectedDisk(where, monkeypatch)
    finally:
        if mounted:
            unmount(where)


def test_free_space_is_read_afresh_for_a_write_and_cached_for_a_question(monkeypatch: pytest.MonkeyPatch) -> None:
    free = [100 * MiB]
    monkeypatch.setattr(disk_space, "statvfs", lambda path: type("S", (), {"f_bavail": free[0], "f_frsize": 1})())
    space = DiskSpace(Path("/nowhere/yet"), 64 * MiB, cache_seconds=3600)
    space.require(36 * MiB)  # leaves exactly the reserve
    with pytest.raises(StorageFull):
        space.require(36 * MiB + 1)
    free[0] = 10 * MiB
    assert space.room_for(0, fresh=False), "a question within the cache time sees the last look"
    assert not space.room_for(0), "a write looks again"
    with pytest.raises(StorageFull):
        space.require(0)


async def test_writes_on_a_full_disk_are_refused_and_a_dropped_version_waits_for_room(
    small_disk: tuple[Path, RealDisk | InjectedDisk],
) -> None:
    where, disk = small_disk
    if isinstance(disk, RealDisk):
        assert filesystem_type(where) == "tmpfs"
    store = await EdgeVectorStore.open(where, DIMENSION)
    served, staged = str(uuid.uuid4()), str(uuid.uuid4())
    await store.upsert(points(50, served))
    await store.upsert(points(40, staged, version=1, searchable=False))
    disk.fill(leave=0)

    for write in (
        store.upsert(points(16, str(uuid.uuid4()))),
        store.publish_version("ds", staged, 1),
        store.delete_document("ds", served),
        store.set_enabled("ds", [points(1, served)[0].id], False),
        store.check_room(),
    ):
        with pytest.raises(StorageFull):
            await write
    assert len(await store.search(SEARCH)) == 5, "searches go on"
    await store.drop_version("ds", staged, 1)  # a failed job's: it waits rather than fails
    assert await store.count("ds", staged) == 40 and await store.count("ds", served) == 50

    disk.empty()
    await store.settle()
    assert await store.count("ds", staged) == 0, "the waiting removal was applied once there was room"
    await store.upsert(points(16, str(uuid.uuid4())))
    assert await store.count() == 66
    await store.close()


async def test_a_store_opened_on_a_full_disk_serves_a_read_only_copy_and_moves_back(
    small_disk: tuple[Path, RealDisk | InjectedDisk],
) -> None:
    where, disk = small_disk
    store = await EdgeVectorStore.open(where, DIMENSION)
    await store.upsert(points(60, str(uuid.uuid4())))
    await store.close()
    disk.fill(leave=0)

    store = await EdgeVectorStore.open(where, DIMENSION)
    [copy] = [place / scratch_name(where) for place in scratch_places() if (place / scratch_name(where)).is_dir()]
    try:
        assert store.read_only and await store.count() == 60
        assert len(await store.search(SEARCH)) == 5
        with pytest.raises(StorageFull):
            await store.upsert(points(1, str(uuid.uuid4())))
        with pytest.raises(StorageFull):
            await store.begin_index_build(where.parent / "build")
        with pytest.raises(StorageFull):
            await store.check_room()
        await store.settle()
        assert store.read_only, "moved back onto a disk with no room"

        disk.empty()
        await store.settle()
        assert not store.read_only and not copy.exists()
        await store.upsert(points(16, str(uuid.uuid4())))
        assert await store.count() == 76
        disk.fill(leave=0)
    finally:
        await store.close()  # on a full disk: nothing pending, nothing to write
    assert not copy.exists()
    disk.empty()
    reopened = await EdgeVectorStore.open(where, DIMENSION)
    assert not reopened.read_only and await reopened.count() == 76
    await reopened.close()


async def test_a_new_store_on_a_full_disk_starts_empty_and_is_created_with_the_first_write_that_has_room(
    small_disk: tuple[Path, RealDisk | InjectedDisk],
) -> None:
    where, disk = small_disk
    disk.fill(leave=DEFAULT_RESERVE_BYTES // 2)
    store = await EdgeVectorStore.open(where, DIMENSION)
    assert store.read_only and await store.count() == 0 and await store.search(SEARCH) == []
    assert not (where / "edge_config.json").exists(), "nothing was created on the full disk"
    disk.empty()
    await store.upsert(points(16, str(uuid.uuid4())))  # the write finds room: the shard is created in place
    assert not store.read_only and (where / "edge_config.json").exists() and await store.count() == 16
    await store.close()
