"""A refusal travels by code and values from where it is raised to where it is shown: through a
real gRPC server (the servicer decorators) and the gateway's reading of the status. Rewording a
message's English leaves its Chinese as it was; words from a newer service that this catalogue
does not know read as general words with an error id, in the reader's language, never as the
newer service's English; words within words read in one language; stored words survive the
round trip."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from gateway.errors import from_grpc, shown
from kbcore.errors import NotFound
from kbcore.refusals.status_details import as_proto, from_proto, words_in
from kbcore.rpc.error_mapping import unary_errors
from kbcore.words.messages import MESSAGES
from kbcore.words.messages.message import Message
from kbcore.words.said import Said, listed, said

SERVICE = "kbtest.Words"
CHAT = "c-7f3a"
ERROR_ID = re.compile(r"[0-9a-f]{12}")


class Refusing:
    """Ends each call as a servicer of ours ends one, with the words the test put here."""

    def __init__(self) -> None:
        self.words = said("chat_does_not_exist", chat_id=CHAT)

    @unary_errors
    async def Call(self, request: bytes, context: Any) -> bytes:
        raise NotFound(self.words)


@pytest.fixture
async def served() -> AsyncIterator[tuple[Refusing, grpc.aio.Channel]]:
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    refusing = Refusing()
    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(refusing.Call, same, same)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Call": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    yield refusing, channel
    await channel.close()
    await server.stop(grace=0.5)


async def refused(channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await channel.unary_unary(f"/{SERVICE}/Call")(b"")
    return caught.value


async def test_the_status_carries_the_code_and_values_and_the_english_as_details(served: Any) -> None:
    _, channel = served
    error = await refused(channel)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert words_in(error.trailing_metadata()) == said("chat_does_not_exist", chat_id=CHAT)
    assert error.details() == MESSAGES["chat_does_not_exist"].en.format(chat_id=CHAT)
    shown_zh = shown(from_grpc(error).words, 404, "zh")
    assert shown_zh == MESSAGES["chat_does_not_exist"].zh.format(chat_id=CHAT) and CHAT in shown_zh


async def test_rewording_the_english_leaves_the_chinese_as_it_was(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _, channel = served
    before = MESSAGES["chat_does_not_exist"]
    monkeypatch.setitem(MESSAGES, "chat_does_not_exist", Message("no conversation is called {chat_id}", before.zh))
    answer = from_grpc(await refused(channel))
    assert shown(answer.words, 404, "en") == f"no conversation is called {CHAT}"
    assert shown(answer.words, 404, "zh") == before.zh.format(chat_id=CHAT)


async def test_words_from_a_newer_service_read_as_general_words_with_an_error_id(
    served: Any, caplog: pytest.LogCaptureFixture
) -> None:
    refusing, channel = served
    refusing.words = said("a_message_only_a_newer_catalogue_has", thing="the newer service's own English")
    answer = from_grpc(await refused(channel))
    for language in ("zh", "en"):
        text = shown(answer.words, 404, language)
        assert "newer service" not in text and "a_message_only" not in text
        found = ERROR_ID.search(text)
        assert found is not None and found.group(0) in caplog.text  # the log line holds what arrived
    assert "a_message_only_a_newer_catalogue_has" in caplog.text
    assert shown(answer.words, 404, "zh").startswith(MESSAGES["what_request_names_does_not_exist"].zh)


async def test_a_known_message_missing_a_hole_reads_as_general_words(served: Any) -> None:
    refusing, channel = served
    refusing.words = Said("chat_does_not_exist", {})  # a newer service dropped the hole
    text = shown(from_grpc(await refused(channel)).words, 404, "zh")
    assert "{chat_id}" not in text and ERROR_ID.search(text)


def test_words_within_words_read_in_one_language() -> None:
    inner = [said("case_has_no_turns", case_id_or_index_1=str(i)) for i in (1, 2, 3)]
    words = said("failed_because", failed=said("upstream_service_failed_2"), words=listed(inner))
    chinese = words.render("zh")
    assert "turns" not in chinese and "upstream" not in chinese
    assert chinese.count("；") == 2 and all(str(i) in chinese for i in (1, 2, 3))
    assert str(words).count("; ") == 2 and "case 3: it has no turns" in str(words)


def test_words_survive_the_wire_and_the_record() -> None:
    words = said(
        "failed_because", failed=said("upstream_service_failed_2"), words=said("chat_does_not_exist", chat_id=CHAT)
    )
    assert from_proto(as_proto(words)) == words
    assert Said.from_json(words.as_json()) == words
    with pytest.raises(ValueError):
        Said.from_json('{"the answer": "not words"}')


def test_a_refusal_is_never_raised_with_a_sentence() -> None:
    with pytest.raises(TypeError):
        NotFound("chat c-1 does not exist")  # type: ignore[arg-type]
