"""A collector's OTLP/HTTP traces endpoint (``POST /v1/traces``, protobuf), keeping every span
it receives with the ``service.name`` of the process that sent it: what a test reads to find
one question's trace across the processes."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.fakes.threaded_server import ThreadedServer


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    trace_id: str  # 32 hex digits
    name: str
    kind: int  # Span.SpanKind: SPAN_KIND_SERVER, SPAN_KIND_CLIENT …
    attributes: dict[str, Any]


def _value(any_value: Any) -> Any:
    field = any_value.WhichOneof("value")
    return getattr(any_value, field) if field else None


class OtlpReceiver:
    """Use as a context manager; ``url`` is the collector's base URL (KB_OTLP_ENDPOINT)."""

    def __init__(self) -> None:
        self._spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        self._served = ThreadedServer("fake-otlp")
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    async def _traces(self, request: Request) -> Response:
        exported = ExportTraceServiceRequest.FromString(await request.body())
        received = []
        for resource_spans in exported.resource_spans:
            attributes = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            service = str(attributes.get("service.name", ""))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            service=service,
                            trace_id=span.trace_id.hex(),
                            name=span.name,
                            kind=span.kind,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                        )
                    )
        with self._lock:
            self._spans.extend(received)
        body = ExportTraceServiceResponse().SerializeToString()
        return Response(body, media_type="application/x-protobuf")

    def __enter__(self) -> OtlpReceiver:
        self.port = self._served.start(Starlette(routes=[Route("/v1/traces", self._traces, methods=["POST"])]))
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.stop()


SERVER = Span.SpanKind.SPAN_KIND_SERVER
CLIENT = Span.SpanKind.SPAN_KIND_CLIENT
