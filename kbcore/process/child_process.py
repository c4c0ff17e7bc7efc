"""Child processes a service starts (the parser of one file, the vector index builder), started
through Python's ``subprocess`` and followed on the event loop.

Why not ``asyncio.create_subprocess_exec``: under uvloop it forks the whole service process
(gRPC's threads and all), and in that fork's child, before ``exec``, the handlers registered with
``pthread_atfork`` run against threads that no longer exist there. Measured with a gRPC server
busy beside it: 6 spawns in 300 died of SIGSEGV before they ran a line of their own. Python's
``subprocess`` starts the child with ``vfork`` (no fork handlers run) and execs at once: 0 in 300.
The pipes are then read on the loop, and the exit is awaited through a pidfd, so nothing blocks
the loop and no thread waits on the child (only its input is written from a thread, a piece at a
time).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import AsyncIterable, Mapping, Sequence
from pathlib import Path


async def _reader(pipe: object) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return reader


class Child:
    """A started child process: its output pipes as stream readers, its exit as an awaitable."""

    def __init__(self, popen: subprocess.Popen[bytes], stdout: asyncio.StreamReader, stderr: asyncio.StreamReader):
        self._popen = popen
        self.pid = popen.pid
        self.stdout = stdout
        self.stderr = stderr

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def feed(self, data: bytes | AsyncIterable[bytes]) -> None:
        """Write ``data`` to the child's input and close it: bytes, or pieces written as they
        come (a file read from SQL, never held whole here). A child that is gone before it read
        them is no error here (its exit status says why)."""
        stdin = self._popen.stdin
        if stdin is None:
            raise ValueError("this child was started without an input pipe")

        def write(piece: bytes) -> bool:
            try:
                stdin.write(piece)
            except (BrokenPipeError, ConnectionResetError):
                return False
            return True

        def close() -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.close()

        try:
            if isinstance(data, bytes):
                await asyncio.to_thread(write, data)
            else:
                async for piece in data:
                    if not await asyncio.to_thread(write, piece):
                        break
        finally:
            await asyncio.to_thread(close)

    async def wait(self) -> int:
        """The exit status, once the child has ended (negative: the signal that ended it)."""
        if self._popen.poll() is None:
            loop = asyncio.get_running_loop()
            descriptor = os.pidfd_open(self.pid)
            try:
                ended: asyncio.Future[None] = loop.create_future()

                def readable() -> None:
                    if not ended.done():
                        ended.set_result(None)

                loop.add_reader(descriptor, readable)
                try:
                    await ended
                finally:
                    loop.remove_reader(descriptor)
            finally:
                os.close(descriptor)
        return self._popen.wait()

    def kill(self) -> None:
        if self._popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._popen.kill()


async def start_child(
    argv: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, with_input: bool = False
) -> Child:
    """Start ``argv`` with piped output (and input, ``with_input``); see the module docstring for why
    this way."""
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if with_input else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
    )
    try:
        return Child(popen, await _reader(popen.stdout), await _reader(popen.stderr))
    except BaseException:
        popen.kill()
        popen.wait()
        raise
