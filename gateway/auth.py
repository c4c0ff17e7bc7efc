"""The operator's routes: anyone else is refused before the route's backend is called, 403 for
a known caller and 401 for a token nobody issued (the chat service tells which)."""

from __future__ import annotations

from gateway.backends import Backend, CallerBackend
from gateway.caller import is_operator
from gateway.errors import ApiError
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb


async def require_operator(backend: Backend) -> None:
    """Resolving the caller's credentials first answers 401 when there are none; the operator's
    own token is recognised here without a call."""
    if backend.metadata and is_operator(backend.request):
        return
    await backend.unary(backend.chat.access.WhoAmI, chat_pb.WhoAmIRequest())
    raise ApiError(403, "only the operator may do this")


async def operator_only(backend: CallerBackend) -> None:
    """``require_operator`` as a router dependency (the route's own ``CallerBackend`` is the
    same object: FastAPI builds a dependency once per request)."""
    await require_operator(backend)
