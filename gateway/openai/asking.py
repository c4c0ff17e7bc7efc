"""What both OpenAI completion formats do before the answer: find the application the request
may ask (the base URL's, or on ``/v1`` the key's own, or the one the operator names as
``model``), open a chat or continue the one named, and start the chat service's ``Ask``, saved
with source ``openai_api``. The models routes use the same lookups, so what ``GET …/models``
lists is exactly what a completion may name.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from gateway.backends import Backend
from gateway.errors import ApiError
from gateway.openai.wire import AskOptions, Conversation, OpenAIError
from gateway.relay import AskStream, started
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.words.said import said

# Names a server-side chat to continue (request) and tells which chat an answer went to
# (response): a client that reads headers keeps the conversation without parsing the body.
CHAT_ID_HEADER = "X-Chat-Id"


@dataclass(frozen=True)
class AskStarted:
    """An answer under way: its stream (first event already read), chat and record."""

    stream: AskStream
    application: pb.Application
    chat_id: str
    record_id: str


async def start_ask(
    request: Request, backend: Backend, app_id: str | None, options: AskOptions, asked: Conversation
) -> AskStarted:
    """Resolve the application, open or reuse a chat, ask. Refusals before the answer starts
    raise ``ApiError`` (or ``OpenAIError``), so the caller answers them with their status."""
    application = await resolve_application(backend, app_id, options.model)
    chat_id = options.chat_id or request.headers.get(CHAT_ID_HEADER, "").strip()
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
    return AskStarted(stream, application, ask.chat_id, first.record_id)


# Callers who are not bound to one application: they name it as the model.
PEOPLE = frozenset({pb.WhoAmIResponse.KIND_OPERATOR, pb.WhoAmIResponse.KIND_USER})


async def resolve_application(backend: Backend, app_id: str | None, model: str) -> pb.Application:
    """The path's application, or on ``/v1`` the key's own (a person or the operator names one as
    ``model``); a ``model`` naming something else is refused rather than silently ignored."""
    if app_id is None:
        who = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
        if who.kind in PEOPLE:
            if not model:
                raise OpenAIError(400, said("model_must_name_application_id_when"), param="model")
            app_id = model
        else:
            app_id = who.application_id
    try:
        application = await get_application(backend, app_id)
    except ApiError as exc:
        if exc.status == 404 and model and app_id == model:
            raise model_not_found(model) from exc
        raise
    if model and model not in (application.id, application.name):
        raise model_not_found(model, "model_does_not_exist_key_asks", application_id=application.id)
    return application


def model_not_found(model: str, why: str = "model_does_not_exist_2", **values: str) -> OpenAIError:
    """The refusal of a model no application answers to; ``why``: the message that says which
    the caller may ask instead, and its values beside the model's."""
    return OpenAIError(404, said(why, model=f"{model!r}", **values), param="model", code="model_not_found")


async def askable_applications(backend: Backend) -> list[pb.Application]:
    """The applications this caller may ask on ``/v1``: its key's own; for a person, those the
    chat service lists for them (all of them for an administrator and the operator)."""
    who = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
    if who.kind in PEOPLE:
        listed = await backend.unary(backend.chat.applications.ListApplications, pb.ListApplicationsRequest())
        return list(listed.applications)
    return [await get_application(backend, who.application_id)]


async def get_application(backend: Backend, app_id: str) -> pb.Application:
    reply: pb.GetApplicationResponse = await backend.unary(
        backend.chat.applications.GetApplication, pb.GetApplicationRequest(application_id=app_id)
    )
    return reply.application


async def _open_chat(backend: Backend, app_id: str) -> str:
    reply: pb.OpenChatResponse = await backend.unary(
        backend.chat.applications.OpenChat, pb.OpenChatRequest(application_id=app_id)
    )
    return reply.chat_id
