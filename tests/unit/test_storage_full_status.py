"""A full disk is its own refusal on every wire: StorageFull (and the database's full-disk errors)
ends a gRPC call RESOURCE_EXHAUSTED with the reason in its trailing metadata, which survives a
service passing it on; the gateway answers 507 with the sentence (a quota, the same code without
the reason, stays 429); the OpenAI routes give it OpenAI's error shape. On a real gRPC server."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from typing import Any

import grpc
import psycopg.errors
import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from gateway.errors import ApiError, from_grpc
from gateway.openai.wire import as_openai_error
from kbcore.db.faults import DATABASE_UNAVAILABLE, as_unavailable, is_disk_full, is_outage
from kbcore.errors import DISK_FULL, QuotaExhausted, StorageFull, Unavailable
from kbcore.refusals.reasons import STORAGE_FULL, reason_in
from kbcore.rpc.error_mapping import RpcError, stream_errors, unary_errors
from kbcore.words.said import said

SERVICE = "kbtest.Disk"
SQLITE_FULL = OperationalError("INSERT INTO chat_record", {}, sqlite3.OperationalError("database or disk is full"))


class Refusing:
    """Methods that end their calls the way the services do, through the servicer decorators."""

    def __init__(self) -> None:
        self.channel: grpc.aio.Channel | None = None

    @unary_errors
    async def Store(self, request: bytes, context: Any) -> bytes:
        raise StorageFull()

    @unary_errors
    async def Quota(self, request: bytes, context: Any) -> bytes:
        raise QuotaExhausted(5)

    @unary_errors
    async def Database(self, request: bytes, context: Any) -> bytes:
        raise SQLITE_FULL

    @unary_errors
    async def Relay(self, request: bytes, context: Any) -> bytes:
        """A service in the middle (chat before retrieval) passing the upstream refusal on."""
        assert self.channel is not None
        try:
            answer: bytes = await self.channel.unary_unary(f"/{SERVICE}/Store")(request)
        except grpc.aio.AioRpcError as error:
            raise RpcError.passed_on(error, said("upstream_service_failed_2")) from None
        return answer

    @stream_errors
    async def Stream(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"started"
        raise StorageFull(said("answer_could_not_be_saved_because_2"))


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    refusing = Refusing()
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(getattr(refusing, name), same, same)
        for name in ("Store", "Quota", "Database", "Relay")
    }
    handlers["Stream"] = grpc.unary_stream_rpc_method_handler(refusing.Stream, same, same)
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    refusing.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    yield refusing.channel
    await refusing.channel.close()
    await server.stop(grace=0.5)


async def refusal(channel: grpc.aio.Channel, method: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await channel.unary_unary(f"/{SERVICE}/{method}")(b"")
    return failed.value


async def test_a_full_disk_is_507_with_its_sentence_and_a_quota_stays_429(channel: grpc.aio.Channel) -> None:
    full = await refusal(channel, "Store")
    assert full.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert reason_in(full.trailing_metadata()) == STORAGE_FULL
    shown = from_grpc(full)
    assert (shown.status, shown.words) == (507, DISK_FULL)

    quota = await refusal(channel, "Quota")
    assert quota.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and reason_in(quota.trailing_metadata()) == ""
    assert from_grpc(quota).status == 429


async def test_the_reason_survives_a_service_that_passes_the_refusal_on(channel: grpc.aio.Channel) -> None:
    relayed = from_grpc(await refusal(channel, "Relay"))
    assert (relayed.status, relayed.words) == (507, DISK_FULL)


async def test_the_databases_full_disk_is_507_and_names_no_driver(channel: grpc.aio.Channel) -> None:
    shown = from_grpc(await refusal(channel, "Database"))
    assert (shown.status, shown.words) == (507, DISK_FULL)
    for message in (str(shown.words), shown.words.render("zh")):
        assert "sqlite" not in message.lower() and "insert" not in message.lower(), message


async def test_a_stream_that_ends_on_a_full_disk_carries_the_reason(channel: grpc.aio.Channel) -> None:
    call = channel.unary_stream(f"/{SERVICE}/Stream")(b"")
    assert await call.read() == b"started"
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await call.read()
    shown = from_grpc(failed.value)
    assert shown.status == 507 and "disk is full" in str(shown.words)
    assert "磁盘已满" in shown.words.render("zh")


def test_the_openai_routes_give_a_full_disk_openais_error_shape() -> None:
    for language in ("en", "zh"):
        body = as_openai_error(ApiError(507, DISK_FULL)).body(language)
        assert body == {
            "error": {
                "message": DISK_FULL.render(language),
                "type": "server_error",
                "param": None,
                "code": "insufficient_storage",
            }
        }
    quota = as_openai_error(ApiError(429, said("quota_used_up"))).body("en")["error"]
    assert (quota["type"], quota["code"]) == ("rate_limit_error", "quota_exceeded")


def test_sqlite_and_postgresql_full_disks_are_storage_full_and_still_an_outage() -> None:
    postgres = OperationalError("INSERT", {}, psycopg.errors.DiskFull("could not extend file: No space left on device"))
    coded = sqlite3.OperationalError("disk full")
    coded.sqlite_errorname = "SQLITE_FULL"  # what sqlite3 sets on SQLITE_FULL, whatever the text
    for error in (SQLITE_FULL, SQLITE_FULL.orig, postgres, coded):
        assert error is not None and is_disk_full(error), error
        assert is_outage(error), error  # the record save still retries it
        translated = as_unavailable(error)
        assert isinstance(translated, StorageFull) and translated.words == DISK_FULL
    refused = OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))
    for other in (refused, IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed"))):
        assert not is_disk_full(other)
    translated = as_unavailable(refused)
    assert type(translated) is Unavailable and translated.words == DATABASE_UNAVAILABLE
