"""What MaxKB's own chat page asks before anything else: the server's profile (it refuses to
start without one) and the signed-in visitor's application profile (its name, opening message
and the features the page may switch on). Both follow MaxKB's v1 shapes; see docs/http.md."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from gateway.backends import CallerBackend
from gateway.errors import ApiError, ok
from gateway.presenter import visitor_profile_out
from gateway.shapes.applications import ApplicationProfileOut, ServerProfileOut
from gateway.shapes.envelope import REFUSALS, Envelope
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.words.said import said

router = APIRouter(tags=["access"], responses=REFUSALS)
VERSION = "0.1.0"
NO_OWN_APPLICATION = said("operator_has_no_application_own_read")


@router.get("/api/profile", response_model=Envelope[ServerProfileOut])
async def server_profile() -> JSONResponse:
    """Needs no credentials: a page reads it before it signs in. Not an enterprise edition, so
    MaxKB's page uses its view with the chat history."""
    return ok({"version": VERSION, "IS_XPACK": False, "XPACK_LICENSE_IS_VALID": False})


@router.get("/api/application/profile", response_model=Envelope[ApplicationProfileOut])
async def application_profile(backend: CallerBackend) -> JSONResponse:
    """The application of the caller's share-link token (or API key)."""
    who = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
    if who.kind == pb.WhoAmIResponse.KIND_OPERATOR or not who.application_id:
        raise ApiError(400, NO_OWN_APPLICATION)
    reply = await backend.unary(
        backend.chat.applications.GetApplication, pb.GetApplicationRequest(application_id=who.application_id)
    )
    return ok(visitor_profile_out(reply.application).wire())
