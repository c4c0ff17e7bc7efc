"""The gRPC server interceptor that counts and times every RPC of a service.

Installed outermost by ``kbcore.rpc.bootstrap.build_server``, so it sees the status the inner
layers (the entry guard, the caller interceptor) end a call with. A server-streaming RPC is
counted when its stream ends, with the status it ended with; the stream's messages pass
through untouched (one pass-through step, no metric work per message).

It is gRPC plumbing that reads the metrics (``kbcore.metrics``), not the other way round: it
rebuilds handlers with ``kbcore.rpc.handlers``, so it lives here and the metrics import nothing
of ``kbcore.rpc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc

from kbcore.metrics.catalog import GRPC_DURATION, GRPC_HANDLED
from kbcore.metrics.registry import is_enabled
from kbcore.rpc.handlers import CallMetadata, MethodInterceptor, rewrapped

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


def _split(method: str) -> tuple[str, str]:
    """``/kb.chat.v1.AnswerService/Ask`` → (``kb.chat.v1.AnswerService``, ``Ask``)."""
    service, _, name = method.lstrip("/").rpartition("/")
    return service or "unknown", name or "unknown"


def _code(context: Context, error: BaseException | None) -> grpc.StatusCode:
    """The status the call ends with. ``context.code()`` holds what ``abort``/``set_code``
    set (None when nothing did); an exception that escapes is UNKNOWN, as grpc reports it;
    a call cancelled under us is CANCELLED, or DEADLINE_EXCEEDED when its deadline passed."""
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        remaining = context.time_remaining()
        return (
            grpc.StatusCode.DEADLINE_EXCEEDED if remaining is not None and remaining <= 0 else grpc.StatusCode.CANCELLED
        )
    code = context.code()
    if code is not None:
        return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
    if error is None:
        return grpc.StatusCode.OK
    return grpc.StatusCode.UNKNOWN


class _Observed:
    """The two series of one method, looked up once per method rather than per call."""

    __slots__ = ("duration", "handled", "method", "service")

    def __init__(self, method: str) -> None:
        self.service, self.method = _split(method)
        self.duration = GRPC_DURATION.labels(self.service, self.method)
        self.handled: dict[grpc.StatusCode, Any] = {}

    def end(self, started: float, context: Context, error: BaseException | None) -> None:
        self.duration.observe(time.perf_counter() - started)
        code = _code(context, error)
        counter = self.handled.get(code)
        if counter is None:
            counter = self.handled[code] = GRPC_HANDLED.labels(self.service, self.method, code.name)
        counter.inc()


class MetricsInterceptor(MethodInterceptor):
    """Counts RPCs by service, method and status code, and times them."""

    def __init__(self) -> None:
        self._methods: dict[str, _Observed] = {}  # bounded: the methods the server registered

    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        observed = self._methods.get(method)
        if observed is None:
            observed = self._methods[method] = _Observed(method)
        timed_stream = lambda b: _timed_stream(b, observed)  # noqa: E731  (a stream of requests is timed alike)
        return rewrapped(handler, lambda b: _timed_unary(b, observed), timed_stream, timed_stream)


def _timed_unary(behaviour: Any, observed: _Observed) -> Any:
    async def timed(request: Any, context: Context) -> Any:
        started, error = time.perf_counter(), None
        try:
            return await behaviour(request, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            observed.end(started, context, error)

    return timed


def _timed_stream(behaviour: Any, observed: _Observed) -> Any:
    if inspect.iscoroutinefunction(behaviour):  # a stream written with ``context.write`` (health's Watch)
        return _timed_unary(behaviour, observed)

    async def timed(request: Any, context: Context) -> AsyncIterator[Any]:
        started, error = time.perf_counter(), None
        try:
            async with contextlib.aclosing(behaviour(request, context)) as items:
                async for item in items:
                    yield item
        except BaseException as exc:
            error = exc
            raise
        finally:
            observed.end(started, context, error)

    return timed


def metrics_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """What ``build_server`` installs first: the interceptor, unless metrics are switched off."""
    return [MetricsInterceptor()] if is_enabled() else []
