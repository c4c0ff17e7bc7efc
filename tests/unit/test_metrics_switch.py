"""Metrics: ``KB_METRICS`` and the metrics ports switch them on and off, and the
gateway's ``/metrics`` answers the operator only (its token; a loopback caller without one only
with ``KB_DEV_LOOPBACK_OPERATOR``)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.app import create_app
from gateway.backends import Backends
from kbcore.metrics.http_server import serve_metrics
from kbcore.metrics.registry import set_enabled
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.metrics_interceptor import MetricsInterceptor, metrics_interceptors
from kbcore.settings import Settings


def test_metrics_ports_follow_the_switch() -> None:
    on = Settings.from_env({"KB_CHAT_METRICS_PORT": "0", "KB_CONTEXT_METRICS_PORT": "-7"})
    assert (on.metrics_port("chat"), on.metrics_port("context"), on.metrics_port("retrieval")) == (0, -1, 9452)
    off = Settings.from_env({"KB_METRICS": "off", "KB_CHAT_METRICS_PORT": "0"})
    assert [off.metrics_port(name) for name in ("chat", "context", "retrieval")] == [-1, -1, -1]
    assert serve_metrics("127.0.0.1", -1) is None


def test_the_grpc_interceptor_follows_the_process_switch() -> None:
    try:
        set_enabled(False)
        assert metrics_interceptors() == []
        set_enabled(True)
        assert [type(i) for i in metrics_interceptors()] == [MetricsInterceptor]
    finally:
        set_enabled(True)


async def _client(settings: Settings, client_host: str, token: str = "") -> AsyncIterator[httpx.AsyncClient]:
    """The gateway app as a caller at ``client_host`` sees it, presenting ``token`` if any."""
    app = create_app(settings, Backends.connect(settings))
    transport = httpx.ASGITransport(app=app, client=(client_host, 40000))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as client:
        yield client
    await app.state.backends.close()


@pytest.fixture
async def operator(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async for client in _client(settings, "127.0.0.1", operator_token(settings)):
        yield client


async def test_the_gateway_serves_metrics_to_the_operator(operator: httpx.AsyncClient) -> None:
    await operator.get("/api/no-such-route/42")
    response = await operator.get("/metrics")
    assert response.status_code == 200
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    assert {"kb_http_requests", "kb_questions", "process_cpu_seconds"} <= families.keys()
    # A path nobody routed is one label value, not the path asked.
    routes = {s.labels.get("route") for s in families["kb_http_requests"].samples}
    assert "unmatched" in routes and not any("42" in str(route) for route in routes)
    # OpenMetrics for a scraper that asks for it.
    asked = await operator.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert asked.headers["content-type"].startswith("application/openmetrics-text")
    assert asked.text.rstrip().endswith("# EOF")


async def test_the_gateway_refuses_metrics_to_anyone_else(settings: Settings) -> None:
    async for client in _client(settings, "203.0.113.9"):
        response = await client.get("/metrics")
        assert response.status_code == 401
        assert "kb_" not in response.text
    async for client in _client(settings, "127.0.0.1", "nobody-issued-this"):
        assert (await client.get("/metrics")).status_code == 401


async def test_a_loopback_caller_without_credentials_gets_no_metrics(settings: Settings) -> None:
    """No operator by address: a process on the same host (a proxy, another user's program)
    presents a token like anyone else (docs/access.md)."""
    async for client in _client(settings, "127.0.0.1"):
        response = await client.get("/metrics")
        assert response.status_code == 401 and "kb_" not in response.text


async def test_the_development_switch_makes_a_loopback_caller_the_operator_and_no_one_else(settings: Settings) -> None:
    dev = dataclasses.replace(settings, dev_loopback_operator=True)
    async for client in _client(dev, "127.0.0.1"):
        assert (await client.get("/metrics")).status_code == 200
    async for client in _client(dev, "203.0.113.9"):
        assert (await client.get("/metrics")).status_code == 401


async def test_metrics_off_means_no_route(settings: Settings) -> None:
    off = Settings(**{**settings.__dict__, "metrics": False})
    async for client in _client(off, "127.0.0.1"):
        response = await client.get("/metrics")
        assert response.status_code == 404
