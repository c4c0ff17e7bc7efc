"""The browser pages: the chat page (by share link or for an application) and the operator
page, served from ``gateway/static`` with no build step.

A content security policy pins every request the pages make to the gateway itself: scripts,
styles and API calls come from this origin only, so a page can never leak a question to a
third party, and Markdown in an answer cannot load anything."""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

from gateway.labels import labels_json

STATIC = Path(__file__).resolve().parent / "static"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # Pages are tiny and change with the release; always revalidate so an upgrade shows at once.
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

router = APIRouter(include_in_schema=False)


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


@router.get("/")
async def root() -> RedirectResponse:
    return RedirectResponse("/ui/admin")


@router.get("/ui/admin")
async def admin_page() -> FileResponse:
    return _page("admin.html")


@router.get("/ui/chat/{app_id}")
async def chat_page(app_id: str) -> FileResponse:
    return _page("chat.html")


@router.get("/ui/share/{access_token}")
async def share_page(access_token: str) -> FileResponse:
    return _page("chat.html")


@router.get("/ui/labels.json")
async def labels() -> JSONResponse:
    """The words the pages show (stop reasons, statuses, progress), from the one Python copy."""
    return JSONResponse(labels_json(), headers=PAGE_HEADERS)


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
