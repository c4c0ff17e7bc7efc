"""The knowledge-gap report and "improve this answer", for the operator.

Improve mirrors MaxKB v1's annotation route (``apps/application/urls.py``, ``ChatView.ChatRecord.Improve``):
``PUT /api/application/{id}/chat/{chat_id}/chat_record/{record_id}/dataset/{dataset_id}/document_id/{document_id}/improve``
with ``{"content", "title", "problem_text"}``. Differences: the document is chosen for the
operator (every improvement of a dataset goes into its document "改进的回答", created when
absent), so the path's ``document_id`` is not read (the page sends ``auto``); the paragraph's
title is the question (``problem_text``, else ``title``, else the record's question), because
our paragraphs have no separate linked questions; the answer is an object naming the dataset,
document and paragraph (MaxKB's is a list of the record, the paragraph id and the dataset id).

The gap report has no MaxKB counterpart: ``GET /api/application/{id}/gap_report`` with
``start_time``/``end_time`` (``YYYY-MM-DD``, UTC, inclusive; the last 30 days when unset) and
``max_groups`` (1–200, 50 when unset); ``…/gap_report/export`` is the same as CSV.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from gateway.backends import Backend, CallerBackend
from gateway.errors import ok
from gateway.log_export import csv_bytes
from gateway.presenter import GAP_EXPORT_COLUMNS, gap_export_row, gap_group_out, improvement_out
from gateway.routes.chat import RecordId
from gateway.shapes.answers import GapReportOut, ImprovementOut
from gateway.shapes.envelope import REFUSALS, Envelope, download
from grpc_stubs.chat.v1 import chat_service_pb2 as pb

router = APIRouter(prefix="/api/application", tags=["knowledge"], responses=REFUSALS)

DateText = Annotated[str, Query(max_length=40)]
# The chat service's own bounds say what is wrong; these only keep megabytes from travelling.
TEXT_LIMIT = 100_000


class ImproveBody(BaseModel):
    content: str = Field(max_length=TEXT_LIMIT)
    title: str = Field(default="", max_length=TEXT_LIMIT)
    problem_text: str | None = Field(default=None, max_length=TEXT_LIMIT)


@router.put(
    "/{app_id}/chat/{chat_id}/chat_record/{record_id}/dataset/{dataset_id}/document_id/{document_id}/improve",
    response_model=Envelope[ImprovementOut],
)
async def improve(
    app_id: str,
    chat_id: str,
    record_id: RecordId,
    dataset_id: str,
    document_id: str,
    body: ImproveBody,
    backend: CallerBackend,
) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.operations.ImproveRecord,
        pb.ImproveRecordRequest(
            application_id=app_id,
            chat_id=chat_id,
            record_id=str(record_id),
            dataset_id=dataset_id,
            question=body.problem_text if body.problem_text is not None else body.title,
            answer=body.content,
        ),
    )
    return ok(improvement_out(str(record_id), reply).wire())


async def _report(
    backend: Backend, app_id: str, start_time: str, end_time: str, max_groups: int
) -> pb.GapReportResponse:
    reply: pb.GapReportResponse = await backend.unary(
        backend.chat.operations.GapReport,
        pb.GapReportRequest(application_id=app_id, date_from=start_time, date_to=end_time, max_groups=max_groups),
        # Grouping embeds every gap: up to a few minutes for a large range on the first call.
        timeout=max(backend.timeout, 300.0),
    )
    return reply


MaxGroups = Annotated[int, Query(ge=0, le=1000)]


@router.get("/{app_id}/gap_report", response_model=Envelope[GapReportOut])
async def gap_report(
    app_id: str, backend: CallerBackend, start_time: DateText = "", end_time: DateText = "", max_groups: MaxGroups = 0
) -> JSONResponse:
    reply = await _report(backend, app_id, start_time, end_time, max_groups)
    return ok(GapReportOut(records=reply.records, groups=[gap_group_out(g) for g in reply.groups]).wire())


@router.get(
    "/{app_id}/gap_report/export",
    response_class=Response,
    responses=download("the gap report as CSV, one row per group", "text/csv"),
)
async def export_gap_report(
    app_id: str, backend: CallerBackend, start_time: DateText = "", end_time: DateText = "", max_groups: MaxGroups = 0
) -> Response:
    reply = await _report(backend, app_id, start_time, end_time, max_groups)
    rows = [gap_export_row(rank, group) for rank, group in enumerate(reply.groups, start=1)]
    return Response(
        content=csv_bytes(GAP_EXPORT_COLUMNS, rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="gap-report-{app_id}.csv"'},
    )
