"""MaxKB's JSON envelope, gRPC statuses as HTTP statuses (``from_grpc``), and the language a
refusal is shown in (``reader_language``).

The HTTP status and the words for a status that came without any are the catalogue's
(``kbcore.error_catalogue``). A gRPC code shared by two refusals is told apart by the reason the
service put in the call's trailing metadata (``kbcore.rpc.reasons``): RESOURCE_EXHAUSTED is a
quota (429) unless it says the disk is full (507, Insufficient Storage).

A refusal travels in English up to here and is put in the reader's language only where it is
written out (``shown``): Chinese unless ``Accept-Language`` prefers English, on every route
(docs/languages.md).
"""

from __future__ import annotations

import http
from typing import Annotated, Any

import grpc
from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from kbcore.error_catalogue import refusal_for_status, words_for_http_status
from kbcore.rpc.reasons import reason_in
from kbcore.words.language import Language, chosen_language
from kbcore.words.translate import refusal_in


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def envelope(data: Any = None, message: str = "成功", code: int = 200) -> dict[str, Any]:
    return {"code": code, "message": message, "data": data}


def ok(data: Any = None) -> JSONResponse:
    return JSONResponse(envelope(data))


# Starlette's own refusals say only the status's name ("Not Found"); these say what happened.
ROUTING_WORDS = {
    404: "nothing is served at this address",
    405: "this address does not accept this request method",
}


def routing_words(status: int, detail: str) -> str:
    """The words for a refusal Starlette raised: its detail, unless that is just the status's name."""
    if detail == http.HTTPStatus(status).phrase:
        return ROUTING_WORDS.get(status, words_for_http_status(status))
    return detail


def is_openai_path(path: str) -> bool:
    """The OpenAI-compatible routes (``/v1/…``, and under ``/api/application/{id}/`` the chat and
    text ``…/completions`` and ``…/models[/{model}]``), whose clients expect OpenAI's error object."""
    return path.startswith("/v1/") or path.endswith(("/completions", "/models")) or "/models/" in path


def reader_language(accept_language: str | None) -> Language:
    """The language a response's words are in, for a client sending ``accept_language``."""
    return chosen_language(None, accept_language)


def request_language(request: Request) -> Language:
    """The language the words of a response to ``request`` are in."""
    return reader_language(request.headers.get("accept-language"))


# A route's parameter: the language the words of its answer are in (``request_language``).
ReaderLanguage = Annotated[Language, Depends(request_language)]


def shown(message: str, status: int, language: Language) -> str:
    """A refusal's English ``message`` as a reader of ``language`` sees it."""
    return refusal_in(language, message, status)


def error_response(status: int, message: str, language: Language) -> JSONResponse:
    """MaxKB's envelope for a refusal, its words in the reader's language."""
    return JSONResponse(envelope(None, shown(message, status, language), status), status_code=status)


def from_grpc(error: grpc.aio.AioRpcError) -> ApiError:
    """A backend's refusal as the HTTP caller gets it: the catalogue's status, and the backend's
    words (the catalogue's where it gave none)."""
    refusal = refusal_for_status(error.code(), reason_in(error.trailing_metadata()))
    return ApiError(refusal.http_status, refusal.http_message(error.details() or ""))
