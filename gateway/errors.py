"""MaxKB's JSON envelope, gRPC statuses as HTTP statuses (``from_grpc``), and the language a
refusal is shown in (``reader_language``).

The HTTP status and the words for a status that came without any are the catalogue's
(``kbcore.refusals.error_catalogue``). A gRPC code shared by two refusals is told apart by the reason the
service put in the call's trailing metadata (``kbcore.refusals.reasons``): RESOURCE_EXHAUSTED is a
quota (429) unless it says the disk is full (507, Insufficient Storage). A refusal that knows
when to try again (a throttled sign-in; an upload over the budget) carries the seconds in the
trailing metadata too, and its 429 or 503 says them in ``Retry-After``.

Only a service's own words reach the caller (``kbcore.rpc.own_words``): a status grpc itself
ended a call with (the chat service restarting: "failed to connect to all addresses; … ipv4:…")
reads as what it means, with an error id the gateway's log line holding its text carries.

A refusal travels as words (``kbcore.words.said``: a message's code and its values) up to here and
is put in the reader's language only where it is written out (``shown``): Chinese unless
``Accept-Language`` prefers English, on every route (docs/languages.md). Words this gateway's
catalogue does not know (a newer service's, during a rolling upgrade) read as the general words
of the refusal's status, with an error id the log line holding them carries: never half a
sentence, never another language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import grpc
from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from kbcore.refusals.error_catalogue import Refusal, refusal_for_status, words_for_http_status
from kbcore.refusals.reasons import reason_in, retry_after_in
from kbcore.rpc.own_words import ours, transport_words, withheld
from kbcore.words.language import Language, chosen_language
from kbcore.words.said import Said, said
from kbcore.words.shown import shown_words


class ApiError(Exception):
    def __init__(self, status: int, words: Said, headers: Mapping[str, str] | None = None) -> None:
        """``headers``: sent with the refusal (``Retry-After`` on a 429 that knows the wait)."""
        super().__init__(words)
        self.status = status
        self.words = words
        self.headers = dict(headers or {})


def retry_after(seconds: int) -> dict[str, str]:
    """The header that tells a client refused for now how many seconds to wait (at least one)."""
    return {"Retry-After": str(max(1, seconds))}


def envelope(data: Any = None, message: str = "成功", code: int = 200) -> dict[str, Any]:
    return {"code": code, "message": message, "data": data}


def ok(data: Any = None) -> JSONResponse:
    return JSONResponse(envelope(data))


# Starlette's own refusals say only the status's name ("Not Found"); these say what happened.
ROUTING_WORDS = {
    404: said("nothing_served_address"),
    405: said("address_does_not_accept_request_method"),
}


def routing_words(status: int) -> Said:
    """The words for a refusal Starlette raised (whose own detail is English, or just the
    status's name): what its status means here."""
    return ROUTING_WORDS.get(status) or words_for_http_status(status)


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


def shown(words: Said, status: int, language: Language) -> str:
    """A refusal's ``words`` as a reader of ``language`` sees them (``kbcore.words.shown``)."""
    return shown_words(words, language, words_for_http_status(status))


def error_response(
    status: int, words: Said, language: Language, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """MaxKB's envelope for a refusal, its words in the reader's language."""
    return JSONResponse(envelope(None, shown(words, status, language), status), status_code=status, headers=headers)


def from_grpc(error: grpc.aio.AioRpcError) -> ApiError:
    """A backend's refusal as the HTTP caller gets it: the catalogue's status, and the backend's
    words (the catalogue's where it gave none)."""
    refusal = refusal_for_status(error.code(), reason_in(error.trailing_metadata()))
    wait = retry_after_in(error.trailing_metadata())
    headers = retry_after(wait) if wait is not None and refusal.http_status in (429, 503) else None
    return ApiError(refusal.http_status, backend_words(error, refusal), headers)


def backend_words(error: grpc.aio.AioRpcError, refusal: Refusal) -> Said:
    """What the HTTP caller reads of a backend's status: the backend's words (after the
    catalogue's lead) when one of our services said them; grpc's own text never (a backend that
    cannot be reached names its address and the connection's error), but what the status means,
    with an error id the gateway's log line holding that text carries."""
    words = ours(error)
    if words is not None:
        return refusal.http_message(words)
    return withheld(error, transport_words(error.code()), "a call to a backend service")
