"""An uploaded file's way from the HTTP request to the retrieval service, never held whole.

Before the body is read, the upload asks the retrieval service for its share of the deployment's
budget for uploads in flight (``UploadDocuments``/``PreviewUploads``' head, with the body's
``Content-Length``): over it, the caller gets 503 with ``Retry-After`` at once and the body is
never looked at. Admitted, the body is read within ``KB_UPLOAD_BODY_SECONDS`` (a slower one gets
408 and lets its share go), Starlette spooling the file to a temporary file as it parses the form
(only a megabyte of it in memory); the file is then sent on in ``UPLOAD_CHUNK_BYTES`` pieces. The
call holds the share until it ends: however the request ends (answered, refused, its client gone,
the gateway stopped), the call ends with it and the retrieval service lets the share go.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from collections.abc import AsyncIterator

import grpc
from fastapi import Request
from starlette.datastructures import FormData, UploadFile
from starlette.requests import ClientDisconnect

from gateway.backends import Backend, DuplexMethod
from gateway.edge.body_limits import MiB, limit_for, upload_max_bytes
from gateway.errors import ApiError, from_grpc
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import DISK_FULL
from kbcore.limits import UPLOAD_CHUNK_BYTES
from kbcore.words.said import said

UPLOAD_CLIENT_GONE = said("client_closed_connection_before_upload_arrived")
UPLOAD_NOT_ADMITTED = said("retrieval_service_answered_upload_other_admission")
UPLOAD_NOT_ANSWERED = said("retrieval_service_ended_upload_without_answer")


def declared_bytes(request: Request) -> int:
    """What the request's body may bring: its ``Content-Length`` (the edge refused a larger one
    than the route takes), or the route's limit for a body sent in chunks."""
    declared = request.headers.get("content-length", "")
    limit = limit_for(request.url.path, upload_max_bytes(request.app.state.settings))
    return int(declared) if declared.isdigit() else limit


class UploadCall:
    """One admitted upload's stream to the retrieval service. Its messages go through a queue of
    one that the call reads as its request stream: each send waits until the call has taken the
    message before (at most two pieces in memory), and gives up as soon as the call has ended
    (the service refused the file while it came: too large, a full disk)."""

    def __init__(self) -> None:
        self._outbox: asyncio.Queue[pb.UploadPart | None] = asyncio.Queue(maxsize=1)
        self._ended = asyncio.Event()
        self._call: grpc.aio.StreamStreamCall[pb.UploadPart, pb.UploadReply] | None = None

    async def requests(self) -> AsyncIterator[pb.UploadPart]:
        """The call's request stream: what ``send`` hands it, until ``None``."""
        while (part := await self._outbox.get()) is not None:
            yield part

    def started(self, call: grpc.aio.StreamStreamCall[pb.UploadPart, pb.UploadReply]) -> None:
        self._call = call
        call.add_done_callback(lambda _: self._ended.set())

    @property
    def call(self) -> grpc.aio.StreamStreamCall[pb.UploadPart, pb.UploadReply]:
        assert self._call is not None, "an upload call used before it started"
        return self._call

    async def refusal(self) -> ApiError:
        """What ended the call without an answer (a refusal: the budget spent, the file too large,
        a full disk), as the HTTP caller gets it. Read from the call's status: a call through
        client interceptors reads a refused stream's end as a plain end."""
        call = self.call
        code = await call.code()
        if code == grpc.StatusCode.OK:
            return ApiError(502, UPLOAD_NOT_ANSWERED)
        initial, trailing = await call.initial_metadata(), await call.trailing_metadata()
        return from_grpc(grpc.aio.AioRpcError(code, initial, trailing, await call.details()))

    async def _put(self, part: pb.UploadPart | None) -> None:
        """Hand ``part`` to the call (None: the request stream ends), or raise the refusal that
        ended it first."""
        if not self._ended.is_set():
            putting = asyncio.ensure_future(self._outbox.put(part))
            ending = asyncio.ensure_future(self._ended.wait())
            try:
                await asyncio.wait((putting, ending), return_when=asyncio.FIRST_COMPLETED)
            finally:
                ending.cancel()
                if not putting.done():
                    putting.cancel()
            if putting.done() and not putting.cancelled():
                return
        raise await self.refusal()

    async def next_answer(self) -> pb.UploadReply:
        """The service's next answer; its refusal raised as the HTTP caller gets it."""
        try:
            reply = await self.call.read()
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            raise await self.refusal() from None
        if not isinstance(reply, pb.UploadReply):  # the end, without an answer
            raise await self.refusal()
        return reply

    async def admission(self, head: pb.UploadHead) -> None:
        """Send the head and wait for the service to admit the upload against its budget."""
        await self._put(pb.UploadPart(head=head))
        if not (await self.next_answer()).HasField("admitted"):
            raise ApiError(502, UPLOAD_NOT_ADMITTED)

    async def send(self, upload: UploadFile, head: pb.UploadFile) -> None:
        """The file's name and rules, then its bytes in pieces, read from where Starlette spooled it."""
        await self._put(pb.UploadPart(file=head))
        await upload.seek(0)
        while piece := await upload.read(UPLOAD_CHUNK_BYTES):
            await self._put(pb.UploadPart(chunk=piece))

    async def answer(self) -> pb.UploadReply:
        """The service's last answer, once everything is sent."""
        await self._put(None)
        return await self.next_answer()

    def end(self) -> None:
        """However the upload ends: a call still going is cancelled (the service lets its share
        go); one that ended first has its request stream closed, so nothing waits on it."""
        if self._call is not None and not self._call.done():
            self._call.cancel()
        with contextlib.suppress(asyncio.QueueFull):
            self._outbox.put_nowait(None)


@contextlib.asynccontextmanager
async def admitted(
    backend: Backend, method: DuplexMethod[pb.UploadPart, pb.UploadReply], request: Request, dataset_id: str = ""
) -> AsyncIterator[UploadCall]:
    """An upload admitted against the budget before its body is read (503 with ``Retry-After``
    when it is spent, 404 for an unknown dataset); the call ends when the block does."""
    settings = request.app.state.settings
    upload = UploadCall()
    try:
        upload.started(
            backend.duplex(method, upload.requests(), timeout=settings.upload_body_seconds + backend.timeout)
        )
        await upload.admission(pb.UploadHead(dataset_id=dataset_id, declared_bytes=declared_bytes(request)))
        yield upload
    finally:
        upload.end()


@contextlib.asynccontextmanager
async def form_of(request: Request, *, max_files: int, max_fields: int) -> AsyncIterator[FormData]:
    """The request's multipart form, read within ``KB_UPLOAD_BODY_SECONDS`` (else 408, and the
    connection is closed: a client that slow gets no more of the server's time); its spooled
    files are deleted when the block ends."""
    seconds = request.app.state.settings.upload_body_seconds
    try:
        async with asyncio.timeout(seconds):
            form = await request.form(max_files=max_files, max_fields=max_fields)
    except TimeoutError:
        raise ApiError(
            408,
            said("upload_body_did_not_arrive_within", seconds=f"{seconds:g}"),
            {"Connection": "close"},
        ) from None
    except ClientDisconnect:
        raise ApiError(499, UPLOAD_CLIENT_GONE) from None
    except OSError as exc:  # the gateway's temporary folder is full
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise ApiError(507, DISK_FULL) from None
        raise
    try:
        yield form
    finally:
        await form.close()


def checked_size(upload: UploadFile, limit: int, *, by_name: bool = False) -> None:
    """413 for a file alone over the upload limit (the body's allowance has room for the form),
    naming it ``by_name`` (a form of several files)."""
    if upload.size is None or upload.size <= limit:
        return
    if by_name:
        filename = upload.filename or ""
        raise ApiError(413, said("larger_upload_limit_mib_kb_upload", filename=f"{filename!r}", limit_mib=limit // MiB))
    raise ApiError(413, said("file_larger_upload_limit_mib_kb", limit_mib=limit // MiB))
