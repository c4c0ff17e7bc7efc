"""Asking (SSE), stopping, and reading the conversation log; a share-link visitor's own chats
(MaxKB's routes for its chat page's history: listed newest first, renamed, deleted — deleting
hides the chat from its visitor, the operator's log keeps its records)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field, field_validator

from gateway import sse_wire
from gateway.backends import Backend, CallerBackend
from gateway.edge.body_limits import MAX_FORM_DATA_BYTES
from gateway.errors import ApiError, ok, request_language, shown
from gateway.labels import progress_line
from gateway.presenter import block_answer_out, chat_summary_out, progress_payload, record_out
from gateway.progress_forms import ProgressForm, progress_form
from gateway.relay import AskStream, batches, finished, started
from gateway.shapes.answers import BlockAnswerOut, RecordOut, RecordPageOut, StoppedOut
from gateway.shapes.applications import ChatPageOut
from gateway.shapes.envelope import REFUSALS, Envelope, event_stream
from gateway.shapes.streams import ANSWER_EVENT
from gateway.shapes.validation_words import refused_field
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.limits import MAX_PAGE, MAX_PAGE_SIZE, MAX_RECORD_ID
from kbcore.words.language import Language
from kbcore.words.said import said

router = APIRouter(prefix="/api/application", tags=["chat"], responses=REFUSALS)


class AskBody(BaseModel):
    message: str = Field(max_length=200_000)
    re_chat: bool = False
    form_data: dict[str, Any] = Field(default_factory=dict)
    # MaxKB's: false answers with the saved record as one JSON object instead of an event stream.
    stream: bool = True
    # Ours: how progress goes out for this answer; unset, the application's choice (docs/http.md).
    progress: ProgressForm | None = None

    @field_validator("stream", mode="before")
    @classmethod
    def _boolean(cls, value: Any) -> Any:
        """JSON's true or false only: "false" as text would otherwise read as false, and a client
        that sends text has a bug it should hear about, not the other format by chance."""
        if not isinstance(value, bool):
            raise refused_field("bool_type", said("must_be_true_event_stream_or_false"))
        return value

    @field_validator("form_data")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        """It is forwarded to the chat service as JSON: bounded, not a way to ship megabytes."""
        if len(json.dumps(value, ensure_ascii=False).encode()) > MAX_FORM_DATA_BYTES:
            raise ValueError(said("form_data_larger_kib_json", max_form_data_bytes_1024=MAX_FORM_DATA_BYTES // 1024))
        return value


PageNumber = Annotated[int, Path(ge=1, le=MAX_PAGE)]
PageSize = Annotated[int, Path(ge=1, le=MAX_PAGE_SIZE)]
RecordId = Annotated[int, Path(ge=1, le=MAX_RECORD_ID)]


@dataclass(frozen=True)
class StreamReader:
    """One answer stream as its reader takes it: the frames' form, the reader's language, and
    the chat and record every chunk names."""

    form: ProgressForm
    language: Language
    chat_id: str
    record_id: str


def _progress(status: dict[str, Any], chunk: sse_wire.ChunkFrames, stream: StreamReader) -> bytes:
    if stream.form == "named":
        return sse_wire.event("agent_status", status)
    line = progress_line(status, stream.language) if stream.form == "reasoning" else None
    return chunk.reasoning(line + "\n") if line else b""


def _frame(item: pb.AskResponse, chunk: sse_wire.ChunkFrames, stream: StreamReader) -> bytes:
    kind = item.WhichOneof("event")
    if kind == "delta":
        return chunk.reasoning(item.delta.reasoning) if item.delta.reasoning else chunk(item.delta.content)
    if kind == "deltas":  # deltas that went together: one answer chunk per entry, in one write
        return b"".join([chunk.reasoning(d.reasoning) if d.reasoning else chunk(d.content) for d in item.deltas.deltas])
    if kind == "progress":
        return _progress(progress_payload(item.progress), chunk, stream)
    if kind == "done":
        return sse_wire.chunk(stream.chat_id, stream.record_id, "", is_end=True)
    return b""


def _failure(failure: ApiError, stream: StreamReader) -> bytes:
    """A failure after the answer started, in the reader's language: an ``event:error`` frame for
    clients that read event names; for those that do not, a last chunk that says it in
    ``content`` (no ``is_end``)."""
    message = shown(failure.words, failure.status, stream.language)
    if stream.form == "named":
        return sse_wire.error(failure.status, message)
    content = shown(sse_wire.failed_answer(failure.words), failure.status, stream.language)
    return sse_wire.failed_chunk(stream.chat_id, stream.record_id, failure.status, message, content)


async def _frames(asked: AskStream, stream: StreamReader) -> AsyncIterator[bytes]:
    chunk = sse_wire.ChunkFrames(stream.chat_id, stream.record_id)
    # A client that reads only data: lines may mis-read a comment between two chunks (MaxKB's
    # page shows their text twice): outside the named form, keep-alive is an empty chunk.
    keep_alive = sse_wire.KEEP_ALIVE if stream.form == "named" else chunk("")
    async with contextlib.aclosing(batches(asked)) as events:
        try:
            async for batch in events:
                if batch is None:
                    yield keep_alive
                else:
                    yield b"".join([_frame(item, chunk, stream) for item in batch])
        except ApiError as failure:
            yield _failure(failure, stream)


ANSWER_STREAM = event_stream(
    'with `"stream": false`, the saved record as one JSON envelope (`BlockAnswerOut`); otherwise '
    "the answer as MaxKB's chunks, keep-alive comments, and each stage's progress as the request's "
    "`progress` (or the application's) says: `reasoning` (default) a chunk with the stage's line in "
    "reasoning_content, `named` an agent_status event, `off` none; a failure after the answer "
    "started is an error event (`named`) or a last chunk saying so (the others)",
    ANSWER_EVENT,
)


# The same 200 as one JSON envelope when the request says ``"stream": false``.
ANSWER: dict[int | str, dict[str, Any]] = {200: {**ANSWER_STREAM[200], "model": Envelope[BlockAnswerOut]}}


@router.post("/chat_message/{chat_id}", response_class=StreamingResponse, responses=ANSWER)
async def chat_message(chat_id: str, body: AskBody, backend: CallerBackend, request: Request) -> Response:
    stream = backend.stream(
        backend.chat.answers.Ask,
        pb.AskRequest(
            chat_id=chat_id,
            message=body.message,
            re_chat=body.re_chat,
            form_data_json=json.dumps(body.form_data, ensure_ascii=False),
            batch_deltas=True,
        ),
    )
    first = await started(stream)
    if not body.stream:
        return await _whole_answer(stream, backend, chat_id, request_language(request))
    form = body.progress or progress_form(first.progress)
    return StreamingResponse(
        _frames(stream, StreamReader(form, request_language(request), chat_id, first.record_id)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _whole_answer(asked: AskStream, backend: Backend, chat_id: str, language: Language) -> JSONResponse:
    """MaxKB's answer to ``"stream": false``: wait for the record to be saved, then send it
    whole, as the record routes read it (the rounds in its trace and its thinking)."""
    done = await finished(asked)
    reply = await backend.unary(
        backend.chat.answers.GetRecord, pb.GetRecordRequest(chat_id=chat_id, record_id=done.record_id)
    )
    return ok(block_answer_out(reply.record, language).wire())


@router.post("/chat_message/{chat_id}/stop", response_model=Envelope[StoppedOut])
async def stop(chat_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.answers.Stop, pb.StopRequest(chat_id=chat_id))
    return ok({"stopped": reply.stopped})


# MaxKB's page asks ``order_asc=true`` and MaxKB then pages from the newest question back (its
# page sorts each page by time itself, and reads older pages as the reader scrolls up);
# ``false`` pages from the first question. Unset, from the first question: what our own page
# and clients read.
OrderAsc = Annotated[
    bool | None,
    Query(
        description="true: pages from the newest question back, newest first (MaxKB's meaning); false or unset: from the first question"
    ),
]


@router.get("/{app_id}/chat/{chat_id}/chat_record/{page}/{size}", response_model=Envelope[RecordPageOut])
async def list_records(
    app_id: str,
    chat_id: str,
    page: PageNumber,
    size: PageSize,
    backend: CallerBackend,
    request: Request,
    order_asc: OrderAsc = None,
) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.answers.ListRecords,
        pb.ListRecordsRequest(
            chat_id=chat_id, page=page, page_size=size, application_id=app_id, newest_first=order_asc is True
        ),
    )
    records = [record_out(r, request_language(request)) for r in reply.records]
    return ok(RecordPageOut(records=records, current=page, size=size, total=reply.total).wire())


@router.get("/{app_id}/chat/{chat_id}/chat_record/{record_id}", response_model=Envelope[RecordOut])
async def get_record(
    app_id: str, chat_id: str, record_id: RecordId, backend: CallerBackend, request: Request
) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.answers.GetRecord,
        pb.GetRecordRequest(chat_id=chat_id, record_id=str(record_id), application_id=app_id),
    )
    return ok(record_out(reply.record, request_language(request)).wire())


class ChatRename(BaseModel):
    abstract: str  # its length and characters are checked by the chat service, with a sentence that says why


@router.get("/{app_id}/chat/client/{page}/{size}", response_model=Envelope[ChatPageOut])
async def list_chats(app_id: str, page: PageNumber, size: PageSize, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.applications.ListChats,
        pb.ListChatsRequest(application_id=app_id, page=page, page_size=size),
    )
    records = [chat_summary_out(c) for c in reply.chats]
    return ok(ChatPageOut(records=records, current=page, size=size, total=reply.total).wire())


@router.put("/{app_id}/chat/client/{chat_id}", response_model=Envelope[bool])
async def rename_chat(app_id: str, chat_id: str, body: ChatRename, backend: CallerBackend) -> JSONResponse:
    await backend.unary(
        backend.chat.applications.RenameChat,
        pb.RenameChatRequest(application_id=app_id, chat_id=chat_id, abstract=body.abstract),
    )
    return ok(True)


@router.delete("/{app_id}/chat/client/{chat_id}", response_model=Envelope[bool])
async def delete_chat(app_id: str, chat_id: str, backend: CallerBackend) -> JSONResponse:
    await backend.unary(
        backend.chat.applications.DeleteChat, pb.DeleteChatRequest(application_id=app_id, chat_id=chat_id)
    )
    return ok(True)
