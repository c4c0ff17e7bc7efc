"""What an OpenAI client gets for a path this server does not serve under an OpenAI base URL:
a 404 (or a 405 for a served path and another method) in OpenAI's error shape, so its SDK
raises its own ``NotFoundError`` with a sentence that says what is served, instead of reading
MaxKB's envelope.

Under ``/v1`` every other path is OpenAI's. Under ``/api/application/{id}/``, MaxKB's own
routes live beside the OpenAI ones, so only OpenAI's resource names are caught there
(``OPENAI_ONLY``): none of them is a MaxKB route. These routes are matched last
(``gateway.openai.routes`` includes them after its own) and stay out of the schema.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from gateway.errors import request_language
from gateway.openai.wire import OpenAIError
from kbcore.words.said import said

router = APIRouter(include_in_schema=False)

# OpenAI API resources that no application serves, and that no MaxKB route is named after.
OPENAI_ONLY = (
    "embeddings",
    "responses",
    "audio",
    "images",
    "files",
    "uploads",
    "moderations",
    "batches",
    "fine_tuning",
    "fine-tunes",
    "assistants",
    "threads",
    "vector_stores",
    "realtime",
    "conversations",
    "containers",
    "evals",
    "videos",
    "edits",
    "engines",
)
# What is served under an OpenAI base URL, and with which method.
SERVED = {"chat/completions": "POST", "completions": "POST", "models": "GET"}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
WHAT_IS_SERVED = said("application_serves_post_chat_completions_post")


def refusal(method: str, base: str, rest: str) -> OpenAIError:
    """405 for a served path asked with another method, else 404; both name what is served."""
    path = f"{base}/{rest}"
    served = SERVED.get(rest) or ("GET" if rest.startswith("models/") else None)
    if served is not None and served != method:
        return OpenAIError(
            405, said("not_served_use", method=method, path=path, served=served), code="method_not_allowed"
        )
    return OpenAIError(
        404, said("not_served_here", method=method, path=path, what_is_served=WHAT_IS_SERVED), code="unknown_url"
    )


async def _refuse(request: Request, base: str, rest: str) -> JSONResponse:
    error = refusal(request.method, base, rest)
    headers = {"Allow": SERVED.get(rest, "GET")} if error.status == 405 else None
    return JSONResponse(error.body(request_language(request)), status_code=error.status, headers=headers)


@router.api_route("/v1/{rest:path}", methods=METHODS)
async def unknown_v1(rest: str, request: Request) -> JSONResponse:
    return await _refuse(request, "/v1", rest)


async def _under_application(app_id: str, request: Request) -> JSONResponse:
    """The path after the base URL, read from the request: the routes below differ only in it."""
    base = f"/api/application/{app_id}"
    return await _refuse(request, base, request.url.path.removeprefix(base + "/"))


# One route per name (and per served path, for its other methods), never a pattern over any
# name: MaxKB's routes beside them keep their own 404s and 405s.
for _name in (*OPENAI_ONLY, *SERVED):
    router.add_api_route(f"/api/application/{{app_id}}/{_name}", _under_application, methods=METHODS)
    router.add_api_route(f"/api/application/{{app_id}}/{_name}/{{rest:path}}", _under_application, methods=METHODS)
