"""What a qdrant-edge shard needs on disk, and where it is served from while its disk is full.

Measured on qdrant-edge 0.9.0 (384 dimensions, Turbo16, paragraphs of about 100 characters),
on ext4 and tmpfs alike: an upserted point grows the shard by about 4.3 KB (its WAL record with
float32 vectors, the stored vector, the payload, the keyword terms); publishing a version or
deleting by filter touches pages already there. :func:`upsert_need` asks for about twice that.

Opening a shard maps the appendable segment's dense chunks (32 MB files, mostly holes) and the
keyword indexes' pages, and reads them whole. On ext4 reading a hole maps the zero page; on
tmpfs it allocates one, so there opening a shard that was created but never reopened needs
about 48 MB, and on a full tmpfs the open dies of SIGBUS (the reason a retrieval service could
not start again on a full disk). :func:`open_need` counts those holes where reads allocate.

When the store's own disk has not that much room, the service still answers searches: the shard
is copied (its data, not its holes) to another filesystem with room, the temporary folder or
``/dev/shm``, and served from there, read-only, until the disk has room again
(:func:`readonly_copy`; ``EdgeVectorStore`` moves back by itself).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kbcore.process.disk_space import MiB, allocated_bytes, existing, free_bytes, holes, reads_allocate
from services.retrieval.store import shard_files
from services.retrieval.store.base import ParagraphPoint, QuestionPoint

logger = logging.getLogger(__name__)

POINT_BYTES = 4096  # a point's WAL record framing, ids, keyword terms and payload keys
VECTOR_BYTES = 8  # per dimension: float32 in the WAL record, 16 bits stored, rounded up
TEXT_FACTOR = 4  # the text is in the WAL record and the payload; UTF-8 bytes, rounded up
FILTER_WRITE = MiB  # a delete or payload change by filter: its WAL record and the pages it dirties
# Opening: the config rewritten, a WAL segment's first pages, version files; creating a shard
# allocates about 7 MB on tmpfs (its bitmaps and flag files are written whole), 70 KB on ext4.
OPEN_BASE = 8 * MiB
# The files an open maps and reads whole (see the module docstring).
READ_WHOLE = ("segments/*/vector_storage-*/**/chunk_*.mmap", "segments/*/payload_index/*-map/*.dat")
SCRATCH_PREFIX = "kb-edge-readonly-"


def upsert_need(points: Sequence[ParagraphPoint | QuestionPoint], dimension: int) -> int:
    """Bytes an upsert of ``points`` (paragraphs or attached questions) may take on disk."""
    text = sum(len(_stored_text(p).encode()) for p in points)
    return len(points) * (POINT_BYTES + VECTOR_BYTES * dimension) + TEXT_FACTOR * text


def _stored_text(point: ParagraphPoint | QuestionPoint) -> str:
    if isinstance(point, QuestionPoint):
        return point.content + point.paragraph_id + point.document_id
    return point.content + point.title + point.document_name


def _read_whole_holes(folder: Path) -> int:
    return holes(f for pattern in READ_WHOLE for f in folder.glob(pattern) if f.is_file())


def open_need(folder: Path, exists: bool, on: Path | None = None) -> int:
    """Bytes opening the shard in ``folder`` (creating it unless ``exists``) may take on the
    filesystem of ``on`` (where a copy of it would be opened; default: where it is)."""
    if not exists:
        return OPEN_BASE
    return OPEN_BASE + (_read_whole_holes(folder) if reads_allocate(on or folder) else 0)


def build_need(folder: Path) -> int:
    """Bytes an index build of the shard in ``folder`` may take: its copy, and as much again for
    the segments the build writes."""
    return 2 * allocated_bytes(folder) + OPEN_BASE


def scratch_name(path: Path) -> str:
    """The read-only copy's folder name for the store at ``path``: the same on every start, so a
    copy that a killed process left behind is found and replaced."""
    return SCRATCH_PREFIX + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def scratch_places() -> list[Path]:
    """Where a read-only copy may go, in order: the temporary folder, then shared memory."""
    places: list[Path] = []
    for place in (Path(tempfile.gettempdir()), Path("/dev/shm")):
        if place.is_dir() and place not in places:
            places.append(place)
    return places


def readonly_copy(path: Path, folder: Path, exists: bool) -> Path | None:
    """A copy of the shard in ``folder`` (an empty folder unless ``exists``) on a filesystem
    other than the store's that has room to open it; None when no place has. A copy left by an
    earlier process is replaced."""
    device = os.stat(existing(path)).st_dev
    size = allocated_bytes(folder) if exists else 0
    for place in scratch_places():
        target = place / scratch_name(path)
        remove_copy(target)
        if os.stat(place).st_dev == device:
            continue  # the same full disk
        need = size + open_need(folder, exists, on=place)
        if free_bytes(place) < need:
            logger.info("no room for a read-only copy of %s in %s (%d MiB needed)", path, place, need // MiB)
            continue
        try:
            if exists:
                shard_files.copy_shard(folder, target)
            else:
                target.mkdir()
        except OSError as exc:
            logger.warning("could not copy %s to %s: %s", folder, target, exc)
            remove_copy(target)
            continue
        return target
    return None


def remove_copy(target: Path) -> None:
    """Delete a read-only copy, if there is one."""
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
