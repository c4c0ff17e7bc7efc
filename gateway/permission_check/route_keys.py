"""Which entry of the permission table a request's route is: ``"METHOD /path/{template}"``, the
key ``kbcore.permissions.table.ROUTES`` lists it under.

FastAPI puts the matched route object in the scope, but a route of a router included in another
router knows only its own part of the path (the paragraphs' routes do not know they live under
``/api/dataset``), so the whole template is read from the application's route list once and kept.

Two modules' routes are not in the table and are not checked: the pages (static HTML and script
files, which call the API like any other client) and the OpenAI-style "not served here" answers
for paths no route serves (they refuse whatever they are asked). Both call no backend.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute, iter_route_contexts

UNCHECKED_MODULES = frozenset({"gateway.pages", "gateway.openai.unknown"})


@dataclass(frozen=True)
class Template:
    path: str  # the whole path template, ``/api/dataset/{dataset_id}/document/{document_id}/paragraph``
    regex: re.Pattern[str]


def templates_of(app: FastAPI) -> dict[int, tuple[Template, ...]]:
    """Each API route object (by identity) with the whole templates it is served under."""
    found: dict[int, list[Template]] = {}
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute) and context.path_format:
            found.setdefault(id(route), []).append(Template(context.path_format, context.path_regex))
    return {key: tuple(value) for key, value in found.items()}


def is_unchecked(route: APIRoute) -> bool:
    return getattr(route.endpoint, "__module__", "") in UNCHECKED_MODULES


def _templates(request: Request, route: APIRoute) -> tuple[Template, ...]:
    app: FastAPI = request.app
    known: dict[int, tuple[Template, ...]] | None = getattr(app.state, "route_templates", None)
    if known is None or id(route) not in known:  # the first request, or a route added since
        known = templates_of(app)
        app.state.route_templates = known
    return known.get(id(route), ())


def route_key(request: Request) -> str | None:
    """``"METHOD /template"`` of the route the request matched; None for a route of
    ``UNCHECKED_MODULES``, "" when the route cannot be told (refused by the caller)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return ""
    if is_unchecked(route):
        return None
    templates = _templates(request, route)
    if len(templates) > 1:  # one route object served under several prefixes: the one that matched
        templates = tuple(t for t in templates if t.regex.match(request.url.path))
    if len(templates) != 1:
        return ""
    return f"{request.method} {templates[0].path}"
