"""Where an edge store's shard folders live, which one is current, and how one is copied.

A store is configured with one path ``P``. Before any index maintenance the shard lives at ``P``
itself (every store made by earlier versions). Maintenance builds a new shard in ``P.build`` and,
once it is complete, renames it to the next generation ``P.g<n>``; the sibling file
``P.current`` names the generation in use. Writing that file (write, fsync, rename) is the
single commit point of a swap, so a process that dies anywhere in a maintenance run reopens
either the old shard or the new one, never a half-built one, and :func:`remove_stale` deletes
whatever the interrupted run left behind the next time the store opens.

Shard folders hold large sparse files (qdrant-edge preallocates 32 MB pages and WAL files that
are mostly holes), so :func:`copy_shard` copies data extents only: a plain ``copytree`` wrote
172 MB for a 5k-point shard that occupies 15 MB.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
from pathlib import Path

logger = logging.getLogger(__name__)

_GENERATION = re.compile(r"\.g(\d+)$")
_CHUNK = 1 << 20


def pointer(path: Path) -> Path:
    """The file naming the current generation of the store at ``path``."""
    return path.with_name(path.name + ".current")


def build_folder(path: Path) -> Path:
    """Where a maintenance run builds the next shard (one run at a time per store)."""
    return path.with_name(path.name + ".build")


def _generation_number(path: Path, folder: Path) -> int | None:
    if not folder.name.startswith(path.name):
        return None
    match = _GENERATION.fullmatch(folder.name[len(path.name) :])
    return int(match.group(1)) if match else None


def current_folder(path: Path) -> Path:
    """The shard folder in use: the generation ``P.current`` names, else ``P`` itself."""
    marker = pointer(path)
    if not marker.exists():
        return path
    name = marker.read_text(encoding="utf-8").strip()
    folder = path.with_name(name)
    if _generation_number(path, folder) is None or not folder.is_dir():
        raise ValueError(f"{marker} names {name!r}, which is not a shard generation of {path.name}")
    return folder


def next_generation(path: Path) -> Path:
    """A generation folder name no existing folder uses."""
    numbers = [_generation_number(path, f) for f in path.parent.glob(path.name + ".g*")]
    return path.with_name(f"{path.name}.g{max([n for n in numbers if n is not None], default=0) + 1}")


def commit(path: Path, folder: Path) -> None:
    """Make ``folder`` the current generation, atomically and durably."""
    marker = pointer(path)
    staged = marker.with_name(marker.name + ".tmp")
    with staged.open("w", encoding="utf-8") as handle:
        handle.write(folder.name + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(staged, marker)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_stale(path: Path) -> list[Path]:
    """Delete every shard folder of the store except the current one: a build left by a killed
    run, a generation renamed but never committed, the generation a swap replaced. Returns them."""
    keep = current_folder(path)
    stale = [build_folder(path)] + [f for f in path.parent.glob(path.name + ".g*") if _generation_number(path, f)]
    if keep != path:
        stale.append(path)  # the shard from before the first generation
    removed = [f for f in stale if f != keep and f.is_dir()]
    for folder in removed:
        logger.info("removing stale vector-store folder %s", folder)
        shutil.rmtree(folder)
    return removed


def copy_shard(source: Path, target: Path) -> None:
    """Copy a closed or flushed shard folder, keeping its sparse files sparse. Not synced: the
    copy is only a build's input (``sync_tree`` makes the result durable before it is committed)."""
    target.mkdir(parents=True)
    for entry in sorted(source.rglob("*")):
        destination = target / entry.relative_to(source)
        if entry.is_dir():
            destination.mkdir(exist_ok=True)
        else:
            _copy_sparse(entry, destination)


def warm(folder: Path) -> int:
    """Read the data of every file under ``folder`` into the page cache; returns the bytes read.
    Opening a shard reads its vectors and graph inside one call that holds the GIL, so a swap
    reads them first, in plain reads that release it: the open then finds them in memory."""
    total = 0
    for entry in folder.rglob("*"):
        if not entry.is_file():
            continue
        with entry.open("rb", buffering=0) as reader:
            for start, stop in _data_extents(reader.fileno(), entry.stat().st_size):
                reader.seek(start)
                remaining = stop - start
                while remaining > 0:
                    chunk = reader.read(min(_CHUNK, remaining))
                    if not chunk:
                        break
                    total += len(chunk)
                    remaining -= len(chunk)
    return total


def sync_tree(folder: Path) -> None:
    """fsync every file and folder under ``folder``: a built shard survives a power cut before
    the commit that makes it current."""
    for entry in sorted(folder.rglob("*"), reverse=True):
        if entry.is_file():
            descriptor = os.open(entry, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        elif entry.is_dir():
            _sync_folder(entry)
    _sync_folder(folder)


def _copy_sparse(source: Path, target: Path) -> None:
    size = source.stat().st_size
    with source.open("rb") as reader, target.open("wb") as writer:
        for start, stop in _data_extents(reader.fileno(), size):
            reader.seek(start)
            writer.seek(start)
            remaining = stop - start
            while remaining > 0:
                chunk = reader.read(min(_CHUNK, remaining))
                if not chunk:
                    break
                writer.write(chunk)
                remaining -= len(chunk)
        writer.truncate(size)
    shutil.copystat(source, target)


def _data_extents(descriptor: int, size: int) -> list[tuple[int, int]]:
    """(start, stop) of the file's data; the whole file where holes cannot be asked for."""
    if size == 0:
        return []
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size)]
    extents: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(descriptor, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                break  # only holes from offset to the end
            return [(0, size)]  # the filesystem cannot tell: copy everything
        stop = min(os.lseek(descriptor, start, os.SEEK_HOLE), size)
        extents.append((start, stop))
        offset = stop
    return extents
