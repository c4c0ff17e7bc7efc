"""``GET /metrics``: the gateway process's Prometheus metrics (``kbcore.metrics``).

For administrators only (``kbcore.permissions.table``: the operator's bearer token, or an
administrator's personal token): the gateway faces the network, and request rates, error rates
and model names are the deployment's business. Prometheus sends the token with
``authorization: {credentials_file: …}`` (``deploy/prometheus.yml``). The services' metrics
ports are internal, like their gRPC ports, and ask for nothing.

Formatted in a worker thread (a plain ``def`` route), not on the event loop that streams the
answers.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from kbcore.metrics.registry import exposition

router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    body, content_type = exposition(request.headers.get("accept"))
    return Response(body, media_type=content_type)
