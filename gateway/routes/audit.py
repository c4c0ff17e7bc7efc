"""The audit trail over HTTP (docs/access.md): who changed what, when and from where, for
administrators. ``GET /api/audit`` is one page in MaxKB's page shape; ``GET /api/audit/export``
is every matching event as CSV, spreadsheet-safe (``gateway.presenter.audit_export_row``),
through the log's CSV writer. The chat service's ``OperationsService.ListAudit`` reads the
trail; who may call the routes is ``kbcore.permissions.table``'s (administrators only).

Filters, all optional: ``actor`` (a username or an actor's id), ``action`` (a prefix, e.g.
``dataset.``), ``object_id``, and ``since``/``until`` (RFC 3339 times with a time zone, such as
``2025-01-31T08:00:00Z``; ``since`` inclusive, ``until`` exclusive). A filter the chat service
could not read is refused here, with a sentence, before any call.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse, Response

from gateway.backends import Backend, CallerBackend
from gateway.errors import ApiError, ok
from gateway.log_export import csv_bytes
from gateway.presenter import AUDIT_EXPORT_COLUMNS, audit_event_out, audit_export_row
from gateway.shapes.audit_trail import AuditPageOut
from gateway.shapes.envelope import REFUSALS, Envelope, download
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.limits import MAX_PAGE
from kbcore.words.said import said

router = APIRouter(prefix="/api/audit", tags=["audit"], responses=REFUSALS)

MAX_AUDIT_PAGE_SIZE = 500  # the chat service's bound on one page (ListAuditRequest)
DEFAULT_AUDIT_PAGE_SIZE = 50
# The export reads the trail page by page, at most this many events (the headers say how many
# matched): a file a spreadsheet opens, not the whole history of a long-lived deployment.
MAX_EXPORTED = 50_000
FILTER_CHARS = 200
TIME_EXAMPLE = "2025-01-31T08:00:00Z"

FilterText = Annotated[str, Query(max_length=FILTER_CHARS)]
TimeText = Annotated[str, Query(max_length=64, description=f"RFC 3339 with a time zone, e.g. {TIME_EXAMPLE}")]


def rfc3339(value: str, name: str) -> str:
    """``value`` as an RFC 3339 time in UTC ("" stays ""), or a 400 that says what is wanted."""
    text = value.strip()
    if not text:
        return ""
    refusal = ApiError(400, said("must_be_rfc_3339_time_time", name=name, time_example=TIME_EXAMPLE))
    if "T" not in text.upper():  # a date alone is not a time: which hour of which zone?
        raise refusal
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise refusal from None
    if moment.tzinfo is None:
        raise refusal
    return moment.astimezone(UTC).isoformat()


async def audit_filter(  # async: no worker-thread hop (see backends)
    actor: Annotated[str, Query(max_length=FILTER_CHARS, description="a username or an actor's id")] = "",
    action: Annotated[str, Query(max_length=FILTER_CHARS, description="a prefix, e.g. dataset.")] = "",
    object_id: FilterText = "",
    since: TimeText = "",
    until: TimeText = "",
) -> pb.ListAuditRequest:
    """Every filter of the trail as query parameters (a route dependency)."""
    start, end = rfc3339(since, "since"), rfc3339(until, "until")
    if start and end and datetime.fromisoformat(start) >= datetime.fromisoformat(end):
        raise ApiError(400, said("since_must_be_earlier_until_since"))
    return pb.ListAuditRequest(
        actor=actor.strip(), action=action.strip(), object_id=object_id.strip(), since=start, until=end
    )


Filter = Annotated[pb.ListAuditRequest, Depends(audit_filter)]


@router.get("", response_model=Envelope[AuditPageOut])
async def list_audit(
    filters: Filter,
    backend: CallerBackend,
    current_page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    page_size: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE_SIZE)] = DEFAULT_AUDIT_PAGE_SIZE,
) -> JSONResponse:
    """One page of the trail, newest first."""
    filters.page, filters.page_size = current_page, page_size
    reply = await backend.unary(backend.chat.operations.ListAudit, filters)
    records = [audit_event_out(e) for e in reply.events]
    return ok(AuditPageOut(records=records, total=reply.total, current=current_page, size=page_size).wire())


async def every_event(backend: Backend, filters: pb.ListAuditRequest) -> tuple[list[pb.AuditEvent], int]:
    """The matching events, newest first, up to ``MAX_EXPORTED``; and how many matched."""
    events: list[pb.AuditEvent] = []
    total, page = 0, 1
    while len(events) < MAX_EXPORTED:
        filters.page, filters.page_size = page, MAX_AUDIT_PAGE_SIZE
        reply = await backend.unary(backend.chat.operations.ListAudit, filters)
        events.extend(reply.events)
        total = reply.total
        if len(reply.events) < MAX_AUDIT_PAGE_SIZE or len(events) >= total:
            break
        page += 1
    return events[:MAX_EXPORTED], total


@router.get(
    "/export",
    response_class=Response,
    responses=download("the matching events as CSV, newest first", "text/csv"),
)
async def export_audit(filters: Filter, backend: CallerBackend) -> Response:
    """The matching events as a CSV file; the headers say how many matched and how many the
    file holds (at most ``MAX_EXPORTED``)."""
    events, total = await every_event(backend, filters)
    today = datetime.now(UTC).date().isoformat()
    headers = {
        "Content-Disposition": f'attachment; filename="audit-{today}.csv"',
        "X-Audit-Total": str(total),
        "X-Audit-Exported": str(len(events)),
        "Access-Control-Expose-Headers": "X-Audit-Total, X-Audit-Exported, Content-Disposition",
    }
    content = csv_bytes(AUDIT_EXPORT_COLUMNS, [audit_export_row(e) for e in events])
    return Response(content=content, media_type="text/csv; charset=utf-8", headers=headers)
