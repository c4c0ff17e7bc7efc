"""The local spool: where an uploaded file waits, on disk, while its request checks it.

A file arrives in pieces (``UploadDocuments``' chunks, or a ``SubmitDocuments`` message written
out at once) and is written here as it comes, so the service never holds it whole; the checks
read it here in a child process (``parsing.confined.check_sandbox``), an archive's files are written
beside it, and the request then copies what passed into the job's rows in SQL (the store every
replica reads). Each request has a folder of its own, removed when the request ends however it
ends. Each process has a folder of those, named by its identity
(``kbcore.process.process_identity``), so a process that died mid-request leaves nothing for
long: the next one to start on the same data folder removes the folders of processes that are
provably gone.

Writing keeps the data folder's reserve free (``KB_DISK_RESERVE_MB``: the vector store maps its
files there and must never meet a full disk), and a full disk is a refusal, never a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path

from kbcore.errors import StorageFull, TooLong
from kbcore.process import process_identity
from kbcore.process.disk_space import DiskSpace, MiB
from kbcore.words.said import said

log = logging.getLogger(__name__)


def _process_folder_name() -> str:
    mine = process_identity.current()
    return mine.text() if mine is not None else f"pid-{os.getpid()}"


class SpoolFolder:
    """One request's folder: the files it received, and an archive's files once checked."""

    def __init__(self, path: Path, disk: DiskSpace) -> None:
        self.path = path
        self._disk = disk
        self._files = 0

    def members(self) -> Path:
        """The folder an archive's files are written to by its check."""
        folder = self.path / "members"
        folder.mkdir(exist_ok=True)
        return folder

    async def receive(self, filename: str, pieces: AsyncIterable[bytes], limit: int) -> Path:
        """Write ``pieces`` to a new file as they come; TooLong past ``limit`` bytes, StorageFull
        when the disk would keep less than its reserve (nothing of it is kept either way: the
        folder goes with the request)."""
        self._files += 1
        target = self.path / f"file-{self._files}"
        size = 0
        with target.open("wb") as out:
            async for piece in pieces:
                size += len(piece)
                if size > limit:
                    raise TooLong(
                        said("larger_upload_limit_mib_kb_upload", filename=f"{filename!r}", limit_mib=limit // MiB)
                    )
                self._disk.require(len(piece))
                try:
                    await asyncio.to_thread(out.write, piece)
                except OSError as exc:
                    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                        raise StorageFull() from None
                    raise
        return target


class UploadSpool:
    """The spool of this process, under ``root`` (``$KB_DATA_DIR/spool``)."""

    def __init__(self, root: Path, disk: DiskSpace) -> None:
        self.root = root
        self.path = root / _process_folder_name()
        self._disk = disk

    @contextlib.asynccontextmanager
    async def folder(self) -> AsyncIterator[SpoolFolder]:
        """A fresh folder for one request, removed with everything in it when the block ends."""
        path = self.path / uuid.uuid4().hex
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StorageFull() from None
            raise
        try:
            yield SpoolFolder(path, self._disk)
        finally:
            # Removed even when the request is cancelled: a thread cannot be, and it is awaited.
            removal = asyncio.ensure_future(asyncio.to_thread(shutil.rmtree, path, True))
            try:
                await asyncio.shield(removal)
            except asyncio.CancelledError:
                await asyncio.wait([removal])
                raise

    def sweep(self) -> None:
        """Remove what processes that are provably gone left here (an identity names one
        process: its start time tells a later process with the same pid apart)."""
        if not self.root.is_dir():
            return
        for entry in self.root.iterdir():
            owner = process_identity.parse(entry.name)
            if owner is not None and process_identity.is_dead(owner):
                log.info("removing the upload spool a stopped process left: %s", entry)
                shutil.rmtree(entry, ignore_errors=True)

    def leftovers(self) -> list[Path]:
        """Every file in this process's spool now, for tests and the bench (empty between requests)."""
        return [entry for entry in self.path.rglob("*") if entry.is_file()] if self.path.is_dir() else []
