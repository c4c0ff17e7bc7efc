"""A real small disk for the full-disk tests: a tmpfs mounted as root (``mount -t tmpfs``),
filled with one file and emptied by deleting it. Where mounting is refused, the tests say so and
inject what they need instead (each says which it used)."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

import kbcore.process.disk_space as disk_space
from tests.document_jobs import hit_test, wait_for_documents

# A document uploaded once space is back: it must be taken in and found, nothing restarted.
LATE = [{"title": "消防演练", "content": "消防演练每季度举行一次，由保卫科组织全院参加。"}]


def mount_tmpfs(where: Path, size: str = "8m") -> bool:
    """A real small filesystem at ``where``; False where this machine refuses to mount one."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return done.returncode == 0


def unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], check=False)


def free(disk: Path) -> int:
    """Bytes still free on the filesystem of ``disk``."""
    info = os.statvfs(disk)
    return info.f_bavail * info.f_frsize


def fill(disk: Path, leave: int = 0) -> Path:
    """Grow one file until the filesystem has ``leave`` bytes or fewer left (0: none at all)."""
    filler = disk / "filler"
    with filler.open("ab", buffering=0) as out:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while free(disk) - size >= leave:
                    out.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    return filler


class RealDisk:
    """The tmpfs mounted at ``where``, filled with one file."""

    def __init__(self, where: Path, size: str) -> None:
        self.where = where
        self.method = f"a real {size} tmpfs, filled"
        self.filler: Path | None = None

    def fill(self, leave: int) -> None:
        self.filler = fill(self.where, leave)

    def empty(self) -> None:
        if self.filler is not None:
            self.filler.unlink()
            self.filler = None


class InjectedDisk:
    """Where mounting is refused: ``statvfs`` of anything under ``where`` (the service's only
    look at free space, ``kbcore.process.disk_space``) reports ``leave`` bytes free while full."""

    method = "an injected statvfs (mounting a tmpfs was refused)"

    def __init__(self, where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        where.mkdir(parents=True, exist_ok=True)
        self.where = where.resolve()
        self.left: int | None = None
        real = disk_space.statvfs

        def statvfs(path: Any) -> Any:
            info = real(path)
            if self.left is None or not Path(path).resolve().is_relative_to(self.where):
                return info
            return SimpleNamespace(f_bavail=self.left // info.f_frsize, f_frsize=info.f_frsize)

        monkeypatch.setattr(disk_space, "statvfs", statvfs)

    def fill(self, leave: int) -> None:
        self.left = leave

    def empty(self) -> None:
        self.left = None


async def a_late_document_is_taken_in(client: httpx.AsyncClient, dataset: str) -> None:
    """``LATE`` uploaded to ``dataset``: ready, and the hit test finds it first."""
    late = await client.post(f"/api/dataset/{dataset}/document", json={"name": "消防", "paragraphs": LATE})
    assert late.status_code == 200, late.text
    [ready] = await wait_for_documents(client, dataset, [late.json()["data"]["id"]])
    assert ready["status"] == "ready", ready
    found = await hit_test(client, dataset, "消防演练多久一次")
    assert found and found[0]["document_id"] == ready["id"], found
