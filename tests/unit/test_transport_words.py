"""grpc's own words never pass a boundary: a status that no service of ours said (a backend that
cannot be reached; a server that is not ours, whatever it wrote) reaches the next caller as what
its code means, with an error id whose log line holds the text; a status one of ours said keeps
its words. Real channels: one to a closed port, one to a gRPC server that ends calls the way a
stranger would (no words in its status details) and the way ours do (the decorators)."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from gateway.errors import from_grpc
from kbcore.errors import Unavailable
from kbcore.rpc.error_mapping import from_upstream, unary_errors
from kbcore.words.said import said

SERVICE = "kbtest.Transport"
ERROR_ID = re.compile(r"\(error id ([0-9a-f]{12})\)")
# What a server that is not ours might say: an address and a status name, for nobody's eyes.
STRANGER = "upstream connect error: ipv4:10.0.0.5:5432 reset, StatusCode.UNAVAILABLE"
UPSTREAM_FAILED = said("upstream_service_failed_2")
AWAY = said("database_unavailable_try_again_shortly")


class Servers:
    @staticmethod
    async def Stranger(request: bytes, context: Any) -> bytes:
        await context.abort(grpc.StatusCode.UNAVAILABLE, STRANGER)
        return b""

    @unary_errors
    async def Ours(self, request: bytes, context: Any) -> bytes:
        raise Unavailable(AWAY)


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    servers = Servers()
    handlers = {
        "Stranger": grpc.unary_unary_rpc_method_handler(Servers.Stranger, same, same),
        "Ours": grpc.unary_unary_rpc_method_handler(servers.Ours, same, same),
    }
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    yield channel
    await channel.close()
    await server.stop(grace=0.5)


async def status_of(channel: grpc.aio.Channel, method: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await channel.unary_unary(f"/{SERVICE}/{method}")(b"")
    return failed.value


async def unreachable() -> tuple[grpc.aio.AioRpcError, int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        return await status_of(channel, "Anything"), port


def logged_id(message: str, caplog: pytest.LogCaptureFixture, words: str) -> None:
    found = ERROR_ID.search(message)
    assert found, message
    assert any(found.group(1) in r.getMessage() and words in r.getMessage() for r in caplog.records), caplog.text


async def test_a_backend_that_cannot_be_reached_is_told_by_its_code_with_an_error_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    status, port = await unreachable()
    assert status.code() == grpc.StatusCode.UNAVAILABLE and f":{port}" in (status.details() or "")

    passed = from_upstream(status, UPSTREAM_FAILED)
    assert passed.code == grpc.StatusCode.UNAVAILABLE
    assert passed.message.startswith("an upstream service failed (error id "), passed.message
    logged_id(passed.message, caplog, f":{port}")

    shown = from_grpc(status)
    assert shown.status == 503
    english = str(shown.words)
    assert english.startswith("a backend service is unavailable (error id "), english
    logged_id(english, caplog, f":{port}")
    chinese = shown.words.render("zh")
    assert chinese.startswith("后端服务不可用（错误 ID ") and chinese.endswith("），详情见服务日志"), chinese
    for text in (passed.message, english, chinese):
        assert str(port) not in text and "127.0.0.1" not in text and "connect" not in text.lower(), text


async def test_a_strangers_words_are_withheld_and_ours_pass(
    channel: grpc.aio.Channel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    stranger = await status_of(channel, "Stranger")
    for message in (from_upstream(stranger, UPSTREAM_FAILED).message, str(from_grpc(stranger).words)):
        assert "10.0.0.5" not in message and "StatusCode" not in message, message
        logged_id(message, caplog, "10.0.0.5")

    ours = await status_of(channel, "Ours")
    shown = from_grpc(ours).words
    assert str(shown) == "a backend service is unavailable: the database is unavailable; try again shortly"
    assert shown.render("zh") == "后端服务不可用：数据库暂时不可用，请稍后再试"
    passed = from_upstream(ours, UPSTREAM_FAILED)
    assert passed.message == "an upstream service failed: the database is unavailable; try again shortly"
