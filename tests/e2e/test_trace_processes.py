"""One question is one trace across the four processes, its id in the record's
details and on its log lines; a collector that goes away costs no question.

The stack runs as separate processes (``python -m tools.stack --ephemeral``) with tracing on
(``KB_OTLP_ENDPOINT``) towards a local OTLP/HTTP receiver that decodes what every process
exports, JSON logs (``KB_LOG_FORMAT=json``) and a remote model (a local OpenAI-protocol
server), so the model calls are HTTP client spans of the same trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.eventually import eventually_sync
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.fakes.otlp_receiver import CLIENT, SERVER, OtlpReceiver, ReceivedSpan
from tests.process_stack import StackProcesses, pid_alive, stack_processes
from tests.shared_tls import TLS
from tests.sse_client import answer_text, parse_frames

pytestmark = [pytest.mark.slow, pytest.mark.own_database]  # the stack's SQLite in its data folder

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
ANSWER = ["ICU每天探视时间为16:00至16:30", "【云岭县人民医院住院患者探视与陪护管理规定】。"]
SERVICES = {"gateway", "chat", "context", "retrieval"}


def respond(body: dict[str, Any]) -> ChatReply:
    if request_kind(body) == "assess":
        return ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}))
    return ChatReply.stream(ANSWER)


@dataclass
class TracedStack:
    processes: StackProcesses
    receiver: OtlpReceiver

    @property
    def info(self) -> dict[str, Any]:
        return self.processes.info

    def json_lines(self) -> list[dict[str, Any]]:
        """The processes' log lines that are JSON objects (the launcher's own may not be)."""
        lines = []
        for line in self.processes.log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                lines.append(json.loads(line))
        return lines


@pytest.fixture(scope="module")
def traced_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TracedStack]:
    with FakeOpenAI(default=respond) as fake, OtlpReceiver() as receiver:
        settings = {
            "KB_MODEL_BASE_URL": fake.base_url,
            "KB_MODEL_API_KEY": "test-key",
            "KB_MODEL_CHAT": "fake-chat",
            "KB_LOG_LEVEL": "INFO",
            "KB_LOG_FORMAT": "json",
            "KB_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",  # exported within a tenth of a second, not five
            "PYTHONUNBUFFERED": "1",
        }
        data_dir = tmp_path_factory.mktemp("traced-stack")
        hospital = ["yunling_hospital_visiting_rules.md"]
        with stack_processes(data_dir, settings, dropped=("KB_", "OTEL_"), documents=hospital) as processes:
            yield TracedStack(processes, receiver)


def ask_one(stack: TracedStack, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One question over HTTP, answered in full; its record as the gateway shows it."""
    url, app = str(stack.info["url"]), str(stack.info["application_id"])
    with httpx.Client(verify=TLS, base_url=url, headers=stack.processes.operator_headers, timeout=60) as client:
        chat_id = client.get(f"/api/application/{app}/chat/open").json()["data"]
        body = {"message": QUESTION}
        with client.stream("POST", f"/api/application/chat_message/{chat_id}", json=body, headers=headers) as response:
            assert response.status_code == 200
            frames = parse_frames(response.read())
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]
        assert answer_text(frames) == "".join(ANSWER)
        record_id = frames[-1].data["chat_record_id"]
        record: dict[str, Any] = client.get(f"/api/application/{app}/chat/{chat_id}/chat_record/{record_id}").json()[
            "data"
        ]
    return record


def spans_of(stack: TracedStack, trace_id: str, until: Any) -> list[ReceivedSpan]:
    """The trace's spans once ``until(spans)`` holds (exports arrive in batches, each process
    on its own schedule)."""
    return eventually_sync(
        lambda: [s for s in stack.receiver.spans() if s.trace_id == trace_id],
        until,
        timeout=30,
        interval=0.1,
        what=f"the spans of trace {trace_id}",
    )


def test_one_question_is_one_trace_across_the_four_processes_and_the_record_carries_its_id(
    traced_stack: TracedStack,
) -> None:
    record = ask_one(traced_stack)
    trace_id = record["trace_id"]
    assert len(trace_id) == 32 and int(trace_id, 16) != 0

    def complete(found: list[ReceivedSpan]) -> bool:
        """Each process's server span has arrived (each ends, and is exported, on its own schedule)."""
        return {s.service for s in found if s.kind == SERVER} >= SERVICES and any(
            s.attributes.get("kb.model.purpose") == "generate" for s in found
        )

    spans = spans_of(traced_stack, trace_id, complete)
    services = {s.service for s in spans}
    assert services >= SERVICES, f"trace {trace_id} has spans from {services} only"
    # The question's own spans: each hop is a server span of its process, in this one trace.
    servers = {(s.service, s.name) for s in spans if s.kind == SERVER}
    assert {"chat", "context", "retrieval"} <= {service for service, _ in servers}
    assert ("chat", "/kb.chat.v1.AnswerService/Ask") in servers
    assert any(service == "gateway" for service, _ in servers)
    # The model calls: one span per purpose with the model's name, and the HTTP request under it.
    purposes = {
        (s.service, s.attributes.get("kb.model.purpose"), s.attributes.get("gen_ai.request.model")) for s in spans
    }
    assert ("chat", "generate", "fake-chat") in purposes
    assert ("retrieval", "assess", "fake-chat") in purposes
    assert any(s.kind == CLIENT and s.service == "chat" and s.name == "POST" for s in spans), [s.name for s in spans]
    rounds = [s for s in spans if s.name == "retrieval round"]
    assert [r.attributes["kb.round"] for r in rounds] == [1] and rounds[0].attributes["kb.hits"] > 0
    # One question in the trace: its one Ask, sent by the gateway and served by the chat service.
    asks = [(s.service, s.kind, s.attributes.get("kb.record_id")) for s in spans if s.name.endswith("/Ask")]
    assert sorted(asks) == [("chat", SERVER, record["id"]), ("gateway", CLIENT, None)]


def test_a_questions_log_lines_carry_its_trace_and_record_ids(traced_stack: TracedStack) -> None:
    record = ask_one(traced_stack)

    def lines_of_question() -> list[dict[str, Any]]:
        return [line for line in traced_stack.json_lines() if line.get("trace_id") == record["trace_id"]]

    lines = eventually_sync(
        lines_of_question,
        lambda found: {line["service"] for line in found} >= {"chat", "retrieval"},
        timeout=10,
        interval=0.1,
        what="the question's log lines from chat and retrieval",
    )
    # The model requests' lines (httpx logs each at INFO), in the chat and retrieval services;
    # the record id reached retrieval as baggage.
    assert {line["service"] for line in lines} >= {"chat", "retrieval"}, lines
    assert {line.get("record_id") for line in lines} == {record["id"]}, lines
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)


def test_a_callers_traceparent_is_honoured_as_the_questions_trace(traced_stack: TracedStack) -> None:
    caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    forged = {"traceparent": f"00-{caller_trace}-00f067aa0ba902b7-01", "baggage": "kb.record_id=999999"}
    record = ask_one(traced_stack, headers=forged)
    assert record["trace_id"] == caller_trace
    # Each process exports on its own schedule: wait for all three (the chat and gateway spans
    # end after retrieval's, so waiting for retrieval alone raced them).
    wanted = {"gateway", "chat", "retrieval"}
    spans = spans_of(traced_stack, caller_trace, lambda found: {s.service for s in found} >= wanted)
    assert {s.service for s in spans} >= wanted
    lines = eventually_sync(  # the lines written with the spans
        lambda: [line for line in traced_stack.json_lines() if line.get("trace_id") == caller_trace],
        timeout=10,
        interval=0.1,
        what="the question's log lines",
    )
    assert lines and {line.get("record_id") for line in lines} <= {record["id"], None}, lines


def test_a_collector_that_goes_away_costs_no_question(traced_stack: TracedStack) -> None:
    """The receiver stops: every export now fails (connection refused) and the questions go on."""
    traced_stack.receiver.__exit__(None, None, None)
    for _ in range(3):
        record = ask_one(traced_stack)
        assert record["status"] == "answered" and len(record["trace_id"]) == 32
    assert traced_stack.processes.process.poll() is None
    assert all(pid_alive(int(pid)) for pid in traced_stack.info["pids"].values())
