"""A streamed upload's messages (``UploadDocuments``, ``PreviewUploads``) read in the order the
protocol gives them: the head, then for each file its ``file`` part and its chunks. Anything out
of order is refused in words; the chunks are counted against the bytes the head declared, which
is what the budget holds for the call.

A refusal while the caller is still sending (a full disk under the spool) waits until it has
sent the rest, read and dropped: a gRPC client whose write is cut off by the call's end reports
its own internal error instead of the refusal, so the uploader would read "internal error" where
the service said "the disk is full"."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest, TooLong
from kbcore.words.said import said

DRAIN_SECONDS = 30.0  # what a refused caller is given to finish sending before the refusal goes anyway


class UploadStream:
    def __init__(self, requests: AsyncIterator[pb.UploadPart]) -> None:
        self._requests = requests
        self._ahead: pb.UploadPart | None = None  # a part read past the chunks it ended
        self._allowed = 0
        self._received = 0

    async def _next(self) -> pb.UploadPart | None:
        if self._ahead is not None:
            part, self._ahead = self._ahead, None
            return part
        try:
            return await anext(self._requests)
        except StopAsyncIteration:
            return None

    async def head(self) -> pb.UploadHead:
        part = await self._next()
        if part is None or part.WhichOneof("part") != "head":
            raise InvalidRequest(said("upload_starts_head_dataset_bytes_brings"))
        self._allowed = part.head.declared_bytes
        return part.head

    async def file(self) -> pb.UploadFile | None:
        """The next file's part; None when the stream has ended."""
        part = await self._next()
        if part is None:
            return None
        if part.WhichOneof("part") != "file":
            raise InvalidRequest(said("file_bytes_come_after_name_send"))
        return part.file

    async def chunks(self, last: bool = False) -> AsyncIterator[bytes]:
        """The bytes of the file named last, until the next file or the stream's end (``last``:
        the stream's end only, else it is refused before anything is stored)."""
        while (part := await self._next()) is not None:
            if part.WhichOneof("part") != "chunk":
                if last:
                    raise InvalidRequest(said("one_upload_brings_one_file_zip"))
                self._ahead = part
                return
            self._received += len(part.chunk)
            if self._received > self._allowed:
                raise TooLong(said("upload_brings_more_bytes_head_declared", self__allowed=self._allowed))
            yield part.chunk

    @contextlib.asynccontextmanager
    async def refused_once_read(self) -> AsyncIterator[None]:
        """Whatever refuses the upload inside the block is raised once the caller has stopped
        sending (what it still sends, up to the bytes its head declared, is read and dropped), or
        after ``DRAIN_SECONDS``."""
        try:
            yield
        except Exception:
            with contextlib.suppress(TimeoutError, InvalidRequest, TooLong):
                async with asyncio.timeout(DRAIN_SECONDS):
                    while (part := await self._next()) is not None and self._received <= self._allowed:
                        self._received += len(part.chunk)
            raise
