"""The wire formats, byte for byte: the SSE stream of an answer, the record JSON and the CSV
export, compared with files captured before the wire vocabulary moved into typed protos.

Only what must vary between runs is replaced before comparing: ids (by order of first
appearance), timestamps and run times. Everything else, including key order, spacing and
float formatting, must stay exactly as captured. ``KB_UPDATE_GOLDEN=1`` rewrites the files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.harness import MAXKB_PAGE_LANGUAGE, Stack
from tools.seed_demo import DEMO_DATASET_ID

GOLDEN = Path(__file__).resolve().parent / "golden"
COMPOUND = "云岭县人民医院ICU每天的探视时间是几点到几点？另外，医保在县级定点医院住院报销比例是多少？"
FOLLOW_UP = "节假日呢？"

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(rb"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
_RUN_TIME = re.compile(rb'"run_time":\s?[0-9.e-]+')
# The prompt quotes paragraph ids, whose tokens vary with the ids themselves.
_MESSAGE_TOKENS = re.compile(rb'"message_tokens":\d+')
# A question's trace id is drawn per question.
_TRACE_ID = re.compile(rb'"trace_id":"[0-9a-f]{32}"')
# A hybrid score fuses ranks of cosines whose last digits can differ from one machine to another
# (the embedder's float kernels): the wire holds a number there, not a byte-exact one.
_SIMILARITY = re.compile(rb'"similarity":[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?')


def normalise(raw: bytes, record_ids: list[str]) -> bytes:
    """Ids become <id-N> in order of first appearance; times, run times and scores become placeholders."""
    seen: dict[bytes, bytes] = {}

    def uuid(match: re.Match[bytes]) -> bytes:
        return seen.setdefault(match.group(0), b"<id-%d>" % len(seen))

    text = raw
    for index, record_id in enumerate(record_ids):
        placeholder = b"<record-%d>" % index
        as_json = re.compile(rb'("(?:id|chat_record_id)":")' + re.escape(record_id.encode()) + rb'"')
        as_csv_row = re.compile(rb"(\n[0-9a-f-]{36},)" + re.escape(record_id.encode()) + rb",")
        text = as_json.sub(rb"\g<1>" + placeholder + b'"', text)
        text = as_csv_row.sub(rb"\g<1>" + placeholder + b",", text)
    text = _UUID.sub(uuid, text)
    text = _TIME.sub(b"<time>", text)
    text = _RUN_TIME.sub(b'"run_time":<seconds>', text)
    text = _MESSAGE_TOKENS.sub(b'"message_tokens":<tokens>', text)
    text = _TRACE_ID.sub(b'"trace_id":"<trace>"', text)
    text = _SIMILARITY.sub(b'"similarity":<score>', text)
    return text


def check(name: str, actual: bytes) -> None:
    path = GOLDEN / name
    if os.environ.get("KB_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(actual)
    expected = path.read_bytes()
    assert actual == expected, f"{name} changed on the wire:\n{actual.decode()[:3000]}"


async def test_answer_stream_record_and_export_are_byte_identical_to_the_captured_wire(stack: Stack) -> None:
    async with stack.http(headers=MAXKB_PAGE_LANGUAGE) as client:
        created = await client.post(
            "/api/application",
            json={"name": "golden", "dataset_id_list": [DEMO_DATASET_ID], "dataset_setting": {"top_n": 3}},
        )
        app_id = created.json()["data"]["id"]
        empty = await client.post("/api/application", json={"name": "golden without datasets"})
        chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        streams = []
        for question in (COMPOUND, FOLLOW_UP):
            response = await client.post(
                f"/api/application/chat_message/{chat_id}", json={"message": question, "progress": "named"}
            )
            assert response.status_code == 200
            streams.append(response.content)
        listed = await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")
        record_ids = [r["id"] for r in listed.json()["data"]["records"]]
        one = await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_ids[0]}")
        export = await client.get(f"/api/application/{app_id}/chat/export")

        empty_id = empty.json()["data"]["id"]
        empty_chat = (await client.get(f"/api/application/{empty_id}/chat/open")).json()["data"]
        no_datasets = await client.post(
            f"/api/application/chat_message/{empty_chat}", json={"message": COMPOUND, "progress": "named"}
        )
        empty_records = await client.get(f"/api/application/{empty_id}/chat/{empty_chat}/chat_record/1/10")
        empty_ids = [r["id"] for r in empty_records.json()["data"]["records"]]
        # The default progress form, as MaxKB's page and line-oriented clients get it: every
        # stage an ordinary chunk with its line in reasoning_content, no event names.
        plain_chat = (await client.get(f"/api/application/{empty_id}/chat/open")).json()["data"]
        plain = await client.post(f"/api/application/chat_message/{plain_chat}", json={"message": COMPOUND})
        plain_records = await client.get(f"/api/application/{empty_id}/chat/{plain_chat}/chat_record/1/10")
        plain_ids = [r["id"] for r in plain_records.json()["data"]["records"]]
        rounds = await client.get(
            f"/api/dataset/{DEMO_DATASET_ID}/hit_test_rounds", params={"query_text": COMPOUND, "top_number": 3}
        )

    assert len(record_ids) == 2
    check("answer_stream.sse", normalise(streams[0], record_ids))
    check("follow_up_stream.sse", normalise(streams[1], record_ids))
    check("record_list.json", normalise(listed.content, record_ids))
    check("record.json", normalise(one.content, record_ids))
    check("export.csv", normalise(export.content, record_ids))
    check("no_datasets_stream.sse", normalise(no_datasets.content, empty_ids))
    check("no_datasets_records.json", normalise(empty_records.content, empty_ids))
    check("no_datasets_stream_reasoning.sse", normalise(plain.content, plain_ids))
    assert b"event:" not in plain.content
    check("hit_test_rounds.json", normalise(rounds.content, []))
