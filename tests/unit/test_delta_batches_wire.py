"""Deltas that reach the gateway together (``AskResponse.deltas``, sent under load) are written
as exactly the frames they would have been one by one: one MaxKB answer chunk, or one OpenAI
completion chunk, per model delta, each a whole ``data:`` frame a parser reads back in order."""

from __future__ import annotations

import json

from gateway import sse_wire
from gateway.openai.routes import _frames
from gateway.openai.wire import Completion, CompletionIn
from gateway.routes.chat import StreamReader, _frame
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.sse_decoder import SseParser

CHAT_ID, RECORD_ID = "449c8f0e-6a9b-4c1e-9d7a-2f0b5d1e8a33", "17"
DELTAS = [pb.AnswerDelta(reasoning="先想一想"), pb.AnswerDelta(content="第一段"), pb.AnswerDelta(content="，第二段")]


def test_a_batch_is_the_maxkb_chunks_of_its_deltas_in_one_write() -> None:
    chunk = sse_wire.ChunkFrames(CHAT_ID, RECORD_ID)
    reader = StreamReader("named", "zh", CHAT_ID, RECORD_ID)
    together = _frame(pb.AskResponse(deltas=pb.AnswerDeltas(deltas=DELTAS)), chunk, reader)
    one_by_one = b"".join(_frame(pb.AskResponse(delta=d), chunk, reader) for d in DELTAS)
    assert together == one_by_one
    frames = SseParser(errors="strict").feed(together)
    payloads = [json.loads(f.data) for f in frames]
    assert [f.event for f in frames] == ["message"] * 3
    assert [(p["reasoning_content"], p["content"], p["is_end"]) for p in payloads] == [
        ("先想一想", "", False),
        ("", "第一段", False),
        ("", "，第二段", False),
    ]


def test_a_batch_is_the_openai_chunks_of_its_deltas() -> None:
    completion = Completion("app", CHAT_ID, RECORD_ID)
    body = CompletionIn.model_validate({"messages": [{"role": "user", "content": "问"}], "stream": True})
    together = _frames(pb.AskResponse(deltas=pb.AnswerDeltas(deltas=DELTAS)), completion, body, "en")
    one_by_one = b"".join(_frames(pb.AskResponse(delta=d), completion, body, "en") for d in DELTAS)
    assert together == one_by_one
    deltas = [json.loads(f.data)["choices"][0]["delta"] for f in SseParser(errors="strict").feed(together)]
    assert deltas == [{"reasoning_content": "先想一想"}, {"content": "第一段"}, {"content": "，第二段"}]
