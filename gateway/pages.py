"""The browser pages: the chat page (by share link or for an application) and the operator
page, served from ``gateway/static`` with no build step.

A content security policy pins every request the pages make to the gateway itself: scripts,
styles and API calls come from this origin only, so a page can never leak a question to a
third party, and Markdown in an answer cannot load anything.

The pages (the chat page and the operator page) and the words they load are served in their
reader's language: a page's ``?lang=`` if it names one, else the browser's ``Accept-Language``,
else Chinese.

The share page alone may be framed by another site: that is how it is embedded (``embed.js``
opens it in an iframe of the gateway's origin, where the host page cannot reach). By default any
site may; a link limited to a list of sites has only those (and the gateway) in the page's
``frame-ancestors``, which the browser enforces. The operator page and the key-based chat page
refuse to be framed."""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

from gateway.backends import AnonymousBackend, Backend
from gateway.errors import ApiError
from gateway.filled_pages import admin_page as filled_admin_page
from gateway.filled_pages import chat_page as filled_chat_page
from gateway.filled_pages import embed_script as filled_embed_script
from gateway.labels import labels_json
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.words.language import Language, chosen_language

STATIC = Path(__file__).resolve().parent / "static"
_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
)
CONTENT_SECURITY_POLICY = _POLICY + "frame-ancestors 'none'"
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # Pages are tiny and change with the release; always revalidate so an upgrade shows at once.
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
JAVASCRIPT = "text/javascript; charset=utf-8"
# The embed script runs in other sites' pages: loadable from any origin, even one that requires
# its subresources to opt in (Cross-Origin-Embedder-Policy).
EMBED_SCRIPT_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "cross-origin",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def root() -> RedirectResponse:
    return RedirectResponse("/ui/admin")


@router.get("/ui/admin")
async def admin_page(request: Request) -> HTMLResponse:
    language = page_language(request)
    return HTMLResponse(filled_admin_page(language, request.query_params), headers=_in_language(PAGE_HEADERS, language))


def page_language(request: Request) -> Language:
    """The language a page or its words are served in: the explicit ``?lang=``, else the
    browser's preference, else Chinese."""
    return chosen_language(request.query_params.get("lang"), request.headers.get("accept-language"))


def _in_language(headers: dict[str, str], language: Language) -> dict[str, str]:
    """Headers for an answer that depends on the reader's language: caches keep one per language."""
    return {**headers, "Vary": "Accept-Language", "Content-Language": language}


def _chat_page(request: Request, headers: dict[str, str]) -> HTMLResponse:
    language = page_language(request)
    return HTMLResponse(filled_chat_page(language, request.query_params), headers=_in_language(headers, language))


@router.get("/ui/chat/{app_id}")
async def chat_page(app_id: str, request: Request) -> HTMLResponse:
    return _chat_page(request, PAGE_HEADERS)


@router.get("/ui/share/{access_token}")
async def share_page(access_token: str, request: Request, backend: AnonymousBackend) -> HTMLResponse:
    return _chat_page(
        request, {**PAGE_HEADERS, "Content-Security-Policy": await _share_page_policy(access_token, backend)}
    )


async def _share_page_policy(access_token: str, backend: Backend) -> str:
    """The share page's policy: framed by any site, or only by the link's own list (and this
    origin). When the list cannot be read, by this origin only: a link's limit never lapses."""
    try:
        sites = await backend.unary(
            backend.chat.access.GetShareLinkSites, pb.GetShareLinkSitesRequest(access_token=access_token[:64])
        )
    except ApiError:
        return _POLICY + "frame-ancestors 'self'"
    if not sites.sites_limited:
        return _POLICY + "frame-ancestors *"
    # Checked where they are stored; a character that could end the directive is refused again here.
    listed = [site for site in sites.allowed_sites if not any(c in site for c in " ;,'\"")]
    return _POLICY + " ".join(["frame-ancestors 'self'", *listed])


@router.get("/ui/embed.js")
async def embed_script() -> Response:
    """The chat bubble another site's page loads (docs/pages.md, "On another site")."""
    return Response(filled_embed_script(), media_type=JAVASCRIPT, headers=EMBED_SCRIPT_HEADERS)


@router.get("/ui/labels.json")
async def labels(request: Request) -> JSONResponse:
    """The words the pages show (stop reasons, statuses, progress, the chat page's own), in the
    page's language (``?lang=``, which the pages send) or else the browser's."""
    language = page_language(request)
    return JSONResponse(labels_json(language), headers=_in_language(PAGE_HEADERS, language))


class _StaticWithPolicy(StaticFiles):
    """Static files with the same headers as the pages (a script is a page's code too)."""

    def file_response(
        self, full_path: PathLike[str] | str, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(PAGE_HEADERS)
        return response


def mount_pages(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/ui/static", _StaticWithPolicy(directory=STATIC), name="static")
