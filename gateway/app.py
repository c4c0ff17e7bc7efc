"""The FastAPI application: routes, the permission check every route passes, the error envelope,
CORS, and the gRPC backends."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from gateway.backends import Backends
from gateway.edge.body_limits import BodyLimit, BodyTooLarge, body_too_large
from gateway.edge.host_rules import EdgeGuard, refusal_body
from gateway.edge.rules import EdgeRules
from gateway.errors import ApiError, envelope, error_response, request_language, routing_words
from gateway.openai import routes as openai
from gateway.openai.asking import CHAT_ID_HEADER
from gateway.openai.wire import OpenAIError
from gateway.pages import mount_pages
from gateway.permission_check.route_check import permitted
from gateway.routes import (
    access,
    applications,
    audit,
    chat,
    credentials,
    datasets,
    evaluation,
    feedback,
    knowledge,
    log,
    models,
    profiles,
    users,
)
from gateway.routes import metrics as metrics_route
from gateway.routes.documents import split
from gateway.shapes.validation_words import described
from gateway.signin_limit import SignInLimiter
from kbcore.error_ids import internal_message, new_error_id
from kbcore.metrics.asgi import HttpMetrics
from kbcore.rpc.caller_token import operator_token
from kbcore.settings import Settings

logger = logging.getLogger(__name__)  # ``log`` is the conversation log's routes

# Every route module, in the order its routes are matched.
# ``profiles`` before ``applications``: /api/application/profile is not an application's id.
ROUTES = (
    split,  # before datasets: "document/split" is no dataset's id
    datasets,
    chat,
    log,
    feedback,
    knowledge,
    access,
    profiles,
    credentials,
    applications,
    evaluation,
    models,
    users,
    audit,
    openai,
)


def _allow_origins(app: FastAPI, settings: Settings) -> None:
    """CORS for the origins ``KB_CORS_ORIGINS`` names (none: same-origin pages only)."""
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["*"],
            allow_headers=["*"],
            allow_credentials=False,
            expose_headers=[CHAT_ID_HEADER],  # a page continues an OpenAI-protocol chat by it
        )


def _answer_errors(app: FastAPI) -> None:
    """How each kind of failure reaches the caller: in the route's wire shape (envelope or OpenAI
    error) and the reader's language; a fault of the gateway's own with an error id only."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.words, request_language(request), exc.headers)

    @app.exception_handler(OpenAIError)
    async def _openai_error(request: Request, exc: OpenAIError) -> JSONResponse:
        return JSONResponse(exc.body(request_language(request)), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(envelope(None, described(exc.errors(), request_language(request)), 400), status_code=400)

    @app.exception_handler(Exception)
    async def _fault(request: Request, exc: Exception) -> JSONResponse:
        """A fault of the gateway's own: the route's wire shape (envelope or OpenAI error) with an
        error id, never the exception's words; its traceback is logged under the id."""
        error_id = new_error_id()
        logger.error("%s %s failed (error id %s)", request.method, request.url.path, error_id, exc_info=exc)
        words = internal_message(error_id)
        body = refusal_body(request.url.path, 500, words, request.headers.get("accept-language"))
        return JSONResponse(body, status_code=500)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, BodyTooLarge):  # the body limit, met while reading
            return body_too_large(request)
        return error_response(exc.status_code, routing_words(exc.status_code), request_language(request))


def create_app(settings: Settings, backends: Backends | None = None) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.backends = backends or Backends.connect(settings)
        try:
            yield
        finally:
            await app.state.backends.close()

    # /docs and /redoc load their scripts from a CDN, outside the pages' content security
    # policy: off unless KB_HTTP_DOCS asks; /openapi.json (what tools read) is always served.
    docs = "/docs" if settings.http_docs else None
    app = FastAPI(
        title="Multi-round retrieval knowledge-base chat",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=docs,
        redoc_url=None,
        # Every route, whichever router brings it: its entry in the permission table, checked
        # before the route's own parameters and body (docs/access.md, People and roles).
        dependencies=[Depends(permitted)],
    )
    app.state.settings = settings
    app.state.operator_token = operator_token(settings)
    app.state.signin_limiter = SignInLimiter(settings.signins_per_ip)
    if backends is not None:
        app.state.backends = backends

    _answer_errors(app)
    _allow_origins(app, settings)
    # Outermost, before CORS and routing: the edge rules, then the body limit.
    app.add_middleware(BodyLimit)
    app.add_middleware(EdgeGuard, rules=EdgeRules.from_settings(settings))
    if settings.metrics:  # outermost of all, so requests refused at the edge are counted too
        app.add_middleware(HttpMetrics)
        app.include_router(metrics_route.router)
    for routes in ROUTES:
        app.include_router(routes.router)
    mount_pages(app)
    return app
