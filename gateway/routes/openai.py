"""Every application as an OpenAI chat-completions endpoint: MaxKB's path
(``/api/application/{id}/chat/completions`` with base URL ``…/api/application/{id}``) and a
deployment-wide ``/v1`` where the API key selects the application.

It is the same ``Ask`` as the chat route, in another wire format: the retrieval rounds go out
as ``reasoning_content`` (the field reasoning-model clients already show), the evidence as a
``sources`` field on the last chunk, and every call is saved as a record with source
``openai_api``. The client's earlier messages are the history unless it names a server-side chat.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from gateway.backends import Backend, CallerBackend
from gateway.errors import ApiError
from gateway.labels import progress_line
from gateway.openai_wire import (
    DONE,
    Completion,
    CompletionIn,
    OpenAIError,
    as_openai_error,
    conversation,
    model_json,
    parse_request,
    references,
    source_json,
    sse_data,
    usage_json,
)
from gateway.presenter import progress_payload
from gateway.relay import AskStream, batches, started
from gateway.shapes.envelope import OPENAI_REFUSALS, event_stream
from gateway.shapes.openai import ChatCompletion, ModelList
from gateway.shapes.streams import OPENAI_EVENT
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2

router = APIRouter(tags=["openai"], responses=OPENAI_REFUSALS)
CHAT_ID_HEADER = "x-chat-id"
# The body is read by the route (``parse_request``), so the schema shows none; with
# ``"stream": true`` the 200 is an event stream instead of the JSON completion.
COMPLETION_STREAM = event_stream(
    'with "stream": true: OpenAI\'s chat.completion.chunk objects as data: lines (the last one with '
    "sources), then data: [DONE]; an error after the stream started is an OpenAI error object",
    OPENAI_EVENT,
)


@router.post("/api/application/{app_id}/chat/completions", response_model=ChatCompletion, responses=COMPLETION_STREAM)
async def application_completions(app_id: str, request: Request, backend: CallerBackend) -> Response:
    return await _complete(request, backend, app_id)


@router.post("/v1/chat/completions", response_model=ChatCompletion, responses=COMPLETION_STREAM)
async def completions(request: Request, backend: CallerBackend) -> Response:
    return await _complete(request, backend, None)


@router.get("/api/application/{app_id}/models", response_model=ModelList)
async def application_models(app_id: str, backend: CallerBackend) -> JSONResponse:
    try:
        application = await _get_application(backend, app_id)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    return JSONResponse({"object": "list", "data": [model_json(application.id, application.name)]})


@router.get("/v1/models", response_model=ModelList)
async def models(backend: CallerBackend) -> JSONResponse:
    """The applications this key may ask: its own, or every one for the operator."""
    try:
        who = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
        if who.kind == pb.WhoAmIResponse.KIND_OPERATOR:
            listed = await backend.unary(backend.chat.applications.ListApplications, pb.ListApplicationsRequest())
            applications = list(listed.applications)
        else:
            applications = [await _get_application(backend, who.application_id)]
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    return JSONResponse({"object": "list", "data": [model_json(a.id, a.name) for a in applications]})


async def _complete(request: Request, backend: Backend, app_id: str | None) -> Response:
    """Check, resolve the application, open or reuse a chat, ask; refusals before the answer
    starts are OpenAI-shaped errors with their HTTP status."""
    body = parse_request(await request.body())  # its size was capped while reading (gateway/edge/body_limits.py)
    asked = conversation(body)
    try:
        application = await _application(backend, app_id, body.model)
        chat_id = body.chat_id or request.headers.get(CHAT_ID_HEADER, "").strip()
        ask = pb.AskRequest(
            message=asked.question,
            system_addendum=asked.system,
            source=common_pb2.RECORD_SOURCE_OPENAI_API,
            batch_deltas=True,
        )
        if chat_id:  # the server keeps this conversation: its history, not the messages sent
            ask.chat_id = chat_id
        else:
            ask.chat_id = await _open_chat(backend, application.id)
            ask.client_history.SetInParent()
            ask.client_history.messages.extend(asked.history)
        stream = backend.stream(backend.chat.answers.Ask, ask)
        first = await started(stream)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    completion = Completion(body.model or application.id, ask.chat_id, first.record_id)
    if body.stream:
        return StreamingResponse(
            _stream(stream, completion, body),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return JSONResponse(await _whole(stream, completion, body))


async def _application(backend: Backend, app_id: str | None, model: str) -> pb.Application:
    """The path's application, or on ``/v1`` the key's own (the operator names one as ``model``);
    a ``model`` naming something else is refused rather than silently ignored."""
    if app_id is None:
        who = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
        if who.kind == pb.WhoAmIResponse.KIND_OPERATOR:
            if not model:
                raise OpenAIError(400, "model must name an application (its id) when the operator asks", param="model")
            app_id = model
        else:
            app_id = who.application_id
    try:
        application = await _get_application(backend, app_id)
    except ApiError as exc:
        if exc.status == 404 and model and app_id == model:
            raise OpenAIError(
                404, f"the model {model!r} does not exist", param="model", code="model_not_found"
            ) from exc
        raise
    if model and model not in (application.id, application.name):
        message = f"the model {model!r} does not exist; this key asks application {application.id}"
        raise OpenAIError(404, message, param="model", code="model_not_found")
    return application


async def _get_application(backend: Backend, app_id: str) -> pb.Application:
    reply: pb.GetApplicationResponse = await backend.unary(
        backend.chat.applications.GetApplication, pb.GetApplicationRequest(application_id=app_id)
    )
    return reply.application


async def _open_chat(backend: Backend, app_id: str) -> str:
    reply: pb.OpenChatResponse = await backend.unary(
        backend.chat.applications.OpenChat, pb.OpenChatRequest(application_id=app_id)
    )
    return reply.chat_id


def _delta_chunk(delta: pb.AnswerDelta, completion: Completion) -> bytes:
    if delta.reasoning:  # the answering model's thinking, DeepSeek's field
        return completion.chunk({"reasoning_content": delta.reasoning})
    return completion.chunk({"content": delta.content})


def _frames(item: pb.AskResponse, completion: Completion, body: CompletionIn) -> bytes:
    kind = item.WhichOneof("event")
    if kind == "delta":
        return _delta_chunk(item.delta, completion)
    if kind == "deltas":  # deltas that arrived together: still one completion chunk each
        return b"".join([_delta_chunk(d, completion) for d in item.deltas.deltas])
    if kind == "progress":
        line = progress_line(progress_payload(item.progress)) if body.show_rounds else None
        return completion.chunk({"reasoning_content": line + "\n"}) if line else b""
    if kind == "done":
        done = item.done
        ending = completion.chunk({"content": references(done.sources)}) if body.references and done.sources else b""
        ending += completion.chunk({}, "stop", sources=[source_json(p) for p in done.sources])
        if body.stream_options is not None and body.stream_options.include_usage:
            ending += completion.usage_chunk(usage_json(done))
        return ending + DONE
    return b""


async def _stream(stream: AskStream, completion: Completion, body: CompletionIn) -> AsyncIterator[bytes]:
    yield completion.chunk({"role": "assistant", "content": ""})
    async with contextlib.aclosing(batches(stream)) as events:
        try:
            async for batch in events:
                if batch is None:
                    yield b": keep-alive\n\n"
                else:
                    yield b"".join([_frames(item, completion, body) for item in batch])
        except ApiError as failure:  # the SDKs raise an error chunk as their own APIError
            yield sse_data(as_openai_error(failure).body())


async def _whole(stream: AskStream, completion: Completion, body: CompletionIn) -> dict[str, Any]:
    content: list[str] = []
    reasoning: list[str] = []
    done: pb.AskDone | None = None
    async with contextlib.aclosing(batches(stream)) as events:
        try:
            async for batch in events:
                for item in batch or ():
                    kind = item.WhichOneof("event")
                    if kind in ("delta", "deltas"):
                        for delta in item.deltas.deltas if kind == "deltas" else (item.delta,):
                            content.append(delta.content)
                            reasoning.append(delta.reasoning)
                    elif kind == "progress" and body.show_rounds:
                        line = progress_line(progress_payload(item.progress))
                        reasoning.extend([line, "\n"] if line else [])
                    elif kind == "done":
                        done = item.done
        except ApiError as failure:
            raise as_openai_error(failure) from failure
    if done is None:
        raise OpenAIError(502, "the chat service ended the answer without finishing it")
    if body.references:
        content.append(references(done.sources))
    sources = [source_json(p) for p in done.sources]
    return completion.whole("".join(content), "".join(reasoning), usage_json(done), sources)
