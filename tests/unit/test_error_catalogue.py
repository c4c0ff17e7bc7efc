"""Every domain error through every surface, each compared with its one catalogue entry: raised in
a servicer (the real decorators, on a real gRPC server) it ends the call with the entry's code,
reason and words; the gateway turns that status into the entry's HTTP status in MaxKB's envelope,
and into OpenAI's error object with the entry's type and code. Also: every gRPC code has an HTTP
status, and a service in the middle passes an upstream refusal on by the one rule."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from gateway.errors import error_response, from_grpc
from gateway.openai.wire import as_openai_error
from kbcore import errors
from kbcore.refusals.error_catalogue import CATALOGUE, INTERNAL_MESSAGE, Refusal, refusal_for_status, refusal_of
from kbcore.refusals.reasons import reason_in
from kbcore.refusals.status_details import words_in
from kbcore.rpc.error_mapping import CALLERS_OWN, from_upstream, stream_errors, unary_errors
from kbcore.words.said import Said, said

SERVICE = "kbtest.Catalogue"
# Every error kbcore.errors defines but their common base, which no service raises as it is.
DOMAIN_ERRORS = [
    value
    for value in vars(errors).values()
    if inspect.isclass(value)
    and issubclass(value, Exception)
    and value.__module__ == errors.__name__
    and value is not errors.Refused
]
ENTRY = dict(CATALOGUE)
WORDS = said("chat_does_not_exist", chat_id="c-7")  # the words the service chose
UPSTREAM_FAILED = said("upstream_service_failed_2")


def raised(error_type: type[Exception], words: Said | None = WORDS) -> Exception:
    """An instance as a service raises it (the errors that word themselves take their own input)."""
    if error_type is errors.QuotaExhausted:
        return errors.QuotaExhausted(5)
    if error_type is errors.StorageFull:
        return errors.StorageFull(words) if words else errors.StorageFull()
    return error_type(words)


def request_for(error_type: type[Exception], words: Said | None = WORDS) -> str:
    """The request that has a method raise ``error_type`` with ``words`` (none: with no words)."""
    return f"{error_type.__name__}:{words.as_json() if words else ''}"


def error_named(request: bytes) -> Exception:
    name, _, words = request.decode().partition(":")
    if name not in vars(errors):
        return RuntimeError("a fault of ours")
    return raised(getattr(errors, name), Said.from_json(words) if words else None)


def words_of(error: Exception) -> Said | None:
    """The words a domain error was raised with."""
    assert isinstance(error, errors.Refused)
    return error.words


class Raising:
    """Methods that end their calls the way the services do: through the servicer decorators."""

    def __init__(self) -> None:
        self.channel: grpc.aio.Channel | None = None

    @unary_errors
    async def Unary(self, request: bytes, context: Any) -> bytes:
        raise error_named(request)

    @stream_errors
    async def Stream(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"started"
        raise error_named(request)

    @unary_errors
    async def Relay(self, request: bytes, context: Any) -> bytes:
        """A service in the middle (chat before retrieval) passing the upstream refusal on."""
        assert self.channel is not None
        try:
            answer: bytes = await self.channel.unary_unary(f"/{SERVICE}/Unary")(request)
        except grpc.aio.AioRpcError as error:
            raise from_upstream(error, UPSTREAM_FAILED) from None
        return answer


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    raising = Raising()
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(raising.Unary, same, same),
        "Relay": grpc.unary_unary_rpc_method_handler(raising.Relay, same, same),
        "Stream": grpc.unary_stream_rpc_method_handler(raising.Stream, same, same),
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    raising.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    yield raising.channel
    await raising.channel.close()
    await server.stop(grace=0.5)


async def refused(channel: grpc.aio.Channel, method: str, request: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        if method == "Stream":
            call = channel.unary_stream(f"/{SERVICE}/Stream")(request.encode())
            assert await call.read() == b"started"
            await call.read()
        else:
            await channel.unary_unary(f"/{SERVICE}/{method}")(request.encode())
    return failed.value


def assert_http_and_openai(status: grpc.aio.AioRpcError, entry: Refusal, words: Said) -> None:
    """The gateway's two wire shapes of ``status`` are the entry's, in either language."""
    assert words_in(status.trailing_metadata()) == words
    shown = from_grpc(status)
    expected = entry.http_message(words)
    assert (shown.status, shown.words) == (entry.http_status, expected)
    for language in ("en", "zh"):
        message = expected.render(language)
        response = error_response(shown.status, shown.words, language)
        assert response.status_code == entry.http_status
        assert json.loads(bytes(response.body)) == {"code": entry.http_status, "message": message, "data": None}
        body = as_openai_error(shown).body(language)
        assert body == {
            "error": {"message": message, "type": entry.openai_type, "param": None, "code": entry.openai_code}
        }


def test_every_domain_error_has_its_own_entry() -> None:
    assert DOMAIN_ERRORS, "kbcore.errors defines the domain errors"
    for error_type in DOMAIN_ERRORS:
        assert error_type in ENTRY, f"{error_type.__name__} is not in the catalogue"
        assert issubclass(error_type, errors.Refused), f"{error_type.__name__} is raised with no words"
        assert refusal_of(raised(error_type)) is ENTRY[error_type], f"{error_type.__name__} reads another's entry"


@pytest.mark.parametrize("method", ["Unary", "Stream"])
@pytest.mark.parametrize("error_type", DOMAIN_ERRORS, ids=lambda t: t.__name__)
async def test_a_domain_error_is_its_entry_on_every_surface(
    channel: grpc.aio.Channel, error_type: type[Exception], method: str
) -> None:
    entry = ENTRY[error_type]
    words = words_of(raised(error_type)) or entry.message
    status = await refused(channel, method, request_for(error_type))
    assert status.code() == entry.grpc_code
    assert status.details() == str(words)
    assert reason_in(status.trailing_metadata()) == entry.reason
    assert_http_and_openai(status, entry, words)


@pytest.mark.parametrize("error_type", DOMAIN_ERRORS, ids=lambda t: t.__name__)
async def test_an_error_without_words_gets_the_catalogues(
    channel: grpc.aio.Channel, error_type: type[Exception]
) -> None:
    entry = ENTRY[error_type]
    words = words_of(raised(error_type, None)) or entry.message
    status = await refused(channel, "Unary", request_for(error_type, None))
    assert (status.code(), status.details()) == (entry.grpc_code, str(words))
    assert_http_and_openai(status, entry, words)


async def test_a_fault_of_ours_is_internal_500_and_a_server_error(channel: grpc.aio.Channel) -> None:
    status = await refused(channel, "Unary", "no domain error")
    assert status.code() == grpc.StatusCode.INTERNAL and "error id" in (status.details() or "")
    words = words_in(status.trailing_metadata())
    assert words is not None and str(words) == status.details()
    assert_http_and_openai(status, refusal_for_status(grpc.StatusCode.INTERNAL), words)
    assert refusal_for_status(grpc.StatusCode.INTERNAL).message == INTERNAL_MESSAGE


def test_refusals_sharing_a_status_show_the_same() -> None:
    """The gateway knows a refusal only by its gRPC code and reason, and an OpenAI route only by
    its HTTP status: errors sharing either must agree on everything shown past it."""
    for _, one in CATALOGUE:
        for _, other in CATALOGUE:
            if (one.grpc_code, one.reason) == (other.grpc_code, other.reason):
                assert one.http_status == other.http_status, (one, other)
            if one.http_status == other.http_status:
                assert (one.openai_type, one.openai_code) == (other.openai_type, other.openai_code), (one, other)


def test_every_grpc_code_a_service_can_end_with_has_an_http_status() -> None:
    """Every code but OK: the catalogue's, the passed-on upstream ones, gRPC's own (a deadline, a
    cancelled call, an unknown method, a message too large) and INTERNAL for a fault."""
    for code in grpc.StatusCode:
        if code == grpc.StatusCode.OK:
            continue
        refusal = refusal_for_status(code)
        assert refusal.grpc_code == code, f"{code.name} has no entry of its own"
        assert 400 <= refusal.http_status < 600 and refusal.message, refusal


@pytest.mark.parametrize("error_type", DOMAIN_ERRORS, ids=lambda t: t.__name__)
async def test_a_service_in_the_middle_passes_a_refusal_on_by_the_one_rule(
    channel: grpc.aio.Channel, error_type: type[Exception]
) -> None:
    """What the caller can act on, and a full disk, keep their code, reason and words; anything
    else is UNAVAILABLE, saying which step failed."""
    entry = ENTRY[error_type]
    words = words_of(raised(error_type)) or entry.message
    status = await refused(channel, "Relay", request_for(error_type))
    if entry.grpc_code in CALLERS_OWN or entry.reason:
        assert (status.code(), status.details()) == (entry.grpc_code, str(words))
        assert reason_in(status.trailing_metadata()) == entry.reason
        assert_http_and_openai(status, entry, words)
    else:
        assert status.code() == grpc.StatusCode.UNAVAILABLE
        assert status.details() == f"an upstream service failed: {words}"
        assert words_in(status.trailing_metadata()) == said("failed_because", failed=UPSTREAM_FAILED, words=words)
        assert reason_in(status.trailing_metadata()) == ""
