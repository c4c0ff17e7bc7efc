"""Every application as an OpenAI endpoint: MaxKB's path (base URL ``/api/application/{id}``)
and a deployment-wide ``/v1`` where the API key selects the application. Chat completions,
legacy text completions and the models list are served; any other OpenAI path is a 404 in
OpenAI's shape (``gateway.openai.unknown``).

Both completion formats are the same ``Ask`` as the chat route, relayed by the code below into
a writer of the format (``gateway.openai.wire.Completion``, ``gateway.openai.text.TextCompletion``):
the retrieval rounds go out as ``reasoning_content`` (the field reasoning-model clients already
show) and all together as ``rounds`` at the end, the evidence as ``sources`` on the last
chunk, and every call is saved as a record with source ``openai_api``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from gateway.backends import Backend, CallerBackend
from gateway.errors import ApiError, request_language
from gateway.labels import progress_line
from gateway.openai import unknown
from gateway.openai.asking import (
    CHAT_ID_HEADER,
    askable_applications,
    get_application,
    model_not_found,
    start_ask,
)
from gateway.openai.text import TextCompletion, TextCompletionIn, parse_text_request, text_question
from gateway.openai.wire import (
    DONE,
    Answer,
    AskOptions,
    Completion,
    CompletionWriter,
    Conversation,
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
from gateway.relay import AskStream, batches
from gateway.shapes.envelope import OPENAI_REFUSALS, event_stream
from gateway.shapes.openai import (
    TEXT_COMPLETION_EVENT,
    ChatCompletion,
    ModelList,
    ModelObject,
    TextCompletionOut,
    request_body,
)
from gateway.shapes.streams import OPENAI_EVENT
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.words.language import Language
from kbcore.words.said import said

router = APIRouter(tags=["openai"], responses=OPENAI_REFUSALS)
# The body is read by the route (``parse_request``), so the schema shows none; with
# ``"stream": true`` the 200 is an event stream instead of the JSON completion.
COMPLETION_STREAM = event_stream(
    'with "stream": true: OpenAI\'s chat.completion.chunk objects as data: lines (the last one with '
    "rounds and sources), then data: [DONE]; an error after the stream started is an OpenAI error object",
    OPENAI_EVENT,
)
TEXT_COMPLETION_STREAM = event_stream(
    'with "stream": true: text_completion chunks as data: lines (rounds as choices[0].reasoning_content, '
    "the last one with rounds and sources), then data: [DONE]",
    TEXT_COMPLETION_EVENT,
)
# The legacy route declares its body for the schema's readers (and the fuzz run) while still
# reading it itself, so every refusal is OpenAI-shaped.
TEXT_BODY = {"requestBody": request_body(TextCompletionIn)}


@router.post("/api/application/{app_id}/chat/completions", response_model=ChatCompletion, responses=COMPLETION_STREAM)
async def application_completions(app_id: str, request: Request, backend: CallerBackend) -> Response:
    return await _chat(request, backend, app_id)


@router.post("/v1/chat/completions", response_model=ChatCompletion, responses=COMPLETION_STREAM)
async def completions(request: Request, backend: CallerBackend) -> Response:
    return await _chat(request, backend, None)


@router.post(
    "/api/application/{app_id}/completions",
    response_model=TextCompletionOut,
    responses=TEXT_COMPLETION_STREAM,
    openapi_extra=TEXT_BODY,
)
async def application_text_completions(app_id: str, request: Request, backend: CallerBackend) -> Response:
    return await _text(request, backend, app_id)


@router.post(
    "/v1/completions", response_model=TextCompletionOut, responses=TEXT_COMPLETION_STREAM, openapi_extra=TEXT_BODY
)
async def text_completions(request: Request, backend: CallerBackend) -> Response:
    return await _text(request, backend, None)


@router.get("/api/application/{app_id}/models", response_model=ModelList)
async def application_models(app_id: str, backend: CallerBackend) -> JSONResponse:
    try:
        application = await get_application(backend, app_id)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    return JSONResponse({"object": "list", "data": [model_json(application.id, application.name)]})


@router.get("/v1/models", response_model=ModelList)
async def models(backend: CallerBackend) -> JSONResponse:
    """The applications this key may ask: its own, or every one for the operator."""
    try:
        applications = await askable_applications(backend)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    return JSONResponse({"object": "list", "data": [model_json(a.id, a.name) for a in applications]})


@router.get("/api/application/{app_id}/models/{model:path}", response_model=ModelObject)
async def application_model(app_id: str, model: str, backend: CallerBackend) -> JSONResponse:
    """The base URL's application, named by its id or its name."""
    try:
        application = await get_application(backend, app_id)
    except ApiError as exc:
        if exc.status == 404:
            raise model_not_found(model, "model_does_not_exist_there_no", app_id=app_id) from exc
        raise as_openai_error(exc) from exc
    if model not in (application.id, application.name):
        raise model_not_found(model, "model_does_not_exist_base_url", application_id=application.id)
    return JSONResponse(model_json(model, application.name))


@router.get("/v1/models/{model:path}", response_model=ModelObject)
async def retrieve_model(model: str, backend: CallerBackend) -> JSONResponse:
    """An application this key may ask, named by its id or its name."""
    try:
        applications = await askable_applications(backend)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    for application in applications:
        if model in (application.id, application.name):
            return JSONResponse(model_json(model, application.name))
    raise model_not_found(model, "model_does_not_exist_get_v1")


async def _chat(request: Request, backend: Backend, app_id: str | None) -> Response:
    body = parse_request(await request.body())  # its size was capped while reading (gateway/edge/body_limits.py)
    return await _answer(request, backend, app_id, body, conversation(body), Completion)


async def _text(request: Request, backend: Backend, app_id: str | None) -> Response:
    body = parse_text_request(await request.body())
    return await _answer(request, backend, app_id, body, text_question(body), TextCompletion)


async def _answer(
    request: Request,
    backend: Backend,
    app_id: str | None,
    body: AskOptions,
    asked: Conversation,
    writer: type[CompletionWriter],
) -> Response:
    """Ask, then relay the answer in ``writer``'s format; refusals before the answer starts
    are OpenAI-shaped errors with their HTTP status."""
    try:
        ask = await start_ask(request, backend, app_id, body, asked)
    except ApiError as exc:
        raise as_openai_error(exc) from exc
    completion = writer(body.model or ask.application.id, ask.chat_id, ask.record_id)
    headers = {CHAT_ID_HEADER: ask.chat_id}
    language = request_language(request)
    if body.stream:
        return StreamingResponse(
            _stream(ask.stream, completion, body, language),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **headers},
        )
    return JSONResponse(await _whole(ask.stream, completion, body, language), headers=headers)


REASONING, CONTENT, ROUND, FINISHED = "reasoning", "content", "round", "done"


def _pieces(item: pb.AskResponse, body: AskOptions, language: Language) -> Iterator[tuple[str, Any]]:
    """One event of the answer as what any format writes: the model's thinking, answer text,
    a retrieval round's line in the reader's language (unless ``show_rounds`` is off), or the end."""
    kind = item.WhichOneof("event")
    if kind in ("delta", "deltas"):  # deltas that arrived together: still one piece each
        for delta in item.deltas.deltas if kind == "deltas" else (item.delta,):
            if delta.reasoning:  # the answering model's thinking
                yield REASONING, delta.reasoning
            if delta.content or not delta.reasoning:
                yield CONTENT, delta.content
    elif kind == "progress" and body.show_rounds:
        line = progress_line(progress_payload(item.progress), language)
        if line:
            yield ROUND, line
    elif kind == "done":
        yield FINISHED, item.done


def _frames(item: pb.AskResponse, completion: CompletionWriter, body: AskOptions, language: Language) -> bytes:
    frames = []
    for kind, value in _pieces(item, body, language):
        if kind == REASONING:
            frames.append(completion.reasoning(value))
        elif kind == CONTENT:
            frames.append(completion.content(value))
        elif kind == ROUND:
            frames.append(completion.round(value))
        else:
            frames.append(_ending(value, completion, body, language))
    return b"".join(frames)


def _ending(done: pb.AskDone, completion: CompletionWriter, body: AskOptions, language: Language) -> bytes:
    ending = completion.content(references(done.sources, language)) if body.references and done.sources else b""
    ending += completion.ending([source_json(p) for p in done.sources])
    if body.stream_options is not None and body.stream_options.include_usage:
        ending += completion.usage_chunk(usage_json(done))
    return ending + DONE


async def _stream(
    stream: AskStream, completion: CompletionWriter, body: AskOptions, language: Language
) -> AsyncIterator[bytes]:
    yield completion.opening()
    async with contextlib.aclosing(batches(stream)) as events:
        try:
            async for batch in events:
                if batch is None:
                    yield b": keep-alive\n\n"
                else:
                    yield b"".join([_frames(item, completion, body, language) for item in batch])
        except ApiError as failure:  # the SDKs raise an error chunk as their own APIError
            yield sse_data(as_openai_error(failure).body(language))


async def _whole(
    stream: AskStream, completion: CompletionWriter, body: AskOptions, language: Language
) -> dict[str, Any]:
    content: list[str] = []
    reasoning: list[str] = []
    done: pb.AskDone | None = None
    async with contextlib.aclosing(batches(stream)) as events:
        try:
            async for batch in events:
                for item in batch or ():
                    for kind, value in _pieces(item, body, language):
                        if kind == CONTENT:
                            content.append(value)
                        elif kind == REASONING:
                            reasoning.append(value)
                        elif kind == ROUND:
                            reasoning.append(completion.keep_round(value))
                        else:
                            done = value
        except ApiError as failure:
            raise as_openai_error(failure) from failure
    if done is None:
        raise OpenAIError(502, said("chat_service_ended_answer_without_finishing"))
    if body.references:
        content.append(references(done.sources, language))
    usage, sources = usage_json(done), [source_json(p) for p in done.sources]
    return completion.whole(Answer("".join(content), "".join(reasoning), usage, sources))


router.include_router(unknown.router)  # last: only what no route above matched
