"""Free space on the disk a service writes to, and the reserve it keeps there.

Some writes cannot fail gracefully on a full filesystem: the embedded vector store maps its
files, and storing through a mapping into a page the filesystem cannot back is a SIGBUS that
kills the process, not an error. Such writes are asked for beforehand: :class:`DiskSpace` says
whether a write of a given size leaves ``KB_DISK_RESERVE_MB`` free. A write reads ``os.statvfs``
afresh (1.7 us, against milliseconds for the write; a cached value would let a disk filled
since the last look take a write it cannot back); a caller that only asks ahead (a request
about to queue work) gets a value at most ``CACHE_SECONDS`` old.

On tmpfs even *reading* a hole of a shared mapping allocates a page (elsewhere it maps the zero
page), so there a file that is mapped and read whole needs its holes in free space:
:func:`reads_allocate` tells such a filesystem, :func:`holes` measures them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from kbcore.errors import StorageFull

MiB = 1 << 20
CACHE_SECONDS = 0.25
_BLOCK = 512  # st_blocks counts 512-byte units whatever the filesystem's block size
# Filesystems whose read faults on a hole of a shared mapping allocate a page.
_READS_ALLOCATE = frozenset({"tmpfs", "shmem"})

statvfs = os.statvfs  # the one system call asked; a test on a machine that refuses mounts replaces it


def existing(path: Path) -> Path:
    """``path``, or its nearest parent that exists (a folder not created yet is on its disk)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    """Bytes a writer without privileges may still use on the filesystem holding ``path``."""
    info = statvfs(existing(path))
    return int(info.f_bavail * info.f_frsize)


def allocated_bytes(folder: Path) -> int:
    """What the files under ``folder`` occupy on disk: their data, not the holes of sparse files."""
    return sum(f.stat().st_blocks * _BLOCK for f in folder.rglob("*") if f.is_file())


def holes(files: Iterable[Path]) -> int:
    """Bytes of the files' length that no block backs yet."""
    total = 0
    for entry in files:
        stat = entry.stat()
        total += max(0, stat.st_size - stat.st_blocks * _BLOCK)
    return total


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding ``path`` ("ext4", "tmpfs"…; "" if it cannot be told):
    the deepest mount point above it in ``/proc/self/mounts``, the last one mounted there."""
    where = str(existing(path).resolve())
    found, depth = "", -1
    try:
        lines = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = where == point or where.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= depth:
            found, depth = fields[2], len(point)
    return found


def reads_allocate(path: Path) -> bool:
    """Whether reading a hole of a mapped file on ``path``'s filesystem needs free space."""
    return filesystem_type(path) in _READS_ALLOCATE


class DiskSpace:
    """The free space of one folder's filesystem against a reserve; thread-safe."""

    def __init__(self, path: Path, reserve_bytes: int, cache_seconds: float = CACHE_SECONDS) -> None:
        self.path = path
        self.reserve_bytes = max(0, reserve_bytes)
        self._cache_seconds = cache_seconds
        self._lock = threading.Lock()
        self._seen_at = -float("inf")
        self._seen = 0

    def free(self, fresh: bool = True) -> int:
        """Free bytes now; with ``fresh=False``, as last read if that is under ``cache_seconds`` old."""
        with self._lock:
            now = time.monotonic()
            if fresh or now - self._seen_at >= self._cache_seconds:
                self._seen, self._seen_at = free_bytes(self.path), now
            return self._seen

    def room_for(self, need: int, fresh: bool = True) -> bool:
        """Whether ``need`` more bytes would leave the reserve free."""
        return self.free(fresh) - need >= self.reserve_bytes

    def require(self, need: int) -> None:
        """Raise StorageFull unless a write of ``need`` bytes leaves the reserve free (read afresh)."""
        if not self.room_for(need):
            raise StorageFull()
