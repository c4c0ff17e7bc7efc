"""The process's metric registry and its switch.

A registry of our own rather than ``prometheus_client``'s default one: a library that registers
into the default registry on import never changes what we export. The process's own CPU, memory
and file descriptors (``process_*``) and the interpreter's garbage collector (``python_gc_*``)
are registered here too, since CPU per question is what an operator watches.

The switch is process-wide because the registry is: the entry point (``run_service``, the
gateway's ``create_app``) sets it from ``KB_METRICS`` before any server is built, and the
gRPC bootstrap reads it to decide whether to install the interceptor.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.exposition import choose_encoder

# ``*_created`` series double every counter and histogram and say nothing a restart-aware
# ``rate()`` needs; they are left out, as in most exporters.
disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

_enabled = True


def set_enabled(enabled: bool) -> None:
    """Called once by the process's entry point, from ``Settings.metrics``."""
    global _enabled
    _enabled = enabled


def is_enabled() -> bool:
    return _enabled


def exposition(accept: str | None) -> tuple[bytes, str]:
    """The registry in the format the scraper asked for (OpenMetrics when its ``Accept`` header
    asks, else Prometheus text), with its content type."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(REGISTRY), content_type
