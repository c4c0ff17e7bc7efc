"""The conversation log over HTTP, in MaxKB's shapes where MaxKB has them: the filtered,
paginated log of an application and its export as CSV or XLSX (the operator's).

MaxKB v1 lists chats (``GET /api/application/{id}/chat/{current_page}/{page_size}``) and exports
them (``POST /api/application/{id}/chat/export``); ours lists and exports *records*, one question
and its answer each, because every filter (status, stop reason, sufficient, vote, source) is a
property of a record. A chat's records are read with the existing
``GET /api/application/{id}/chat/{chat_id}/chat_record/…`` routes.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import JSONResponse, Response

from gateway.backends import CallerBackend
from gateway.errors import ApiError, ReaderLanguage, ok
from gateway.log_export import csv_bytes, xlsx_bytes
from gateway.presenter import LOG_EXPORT_COLUMNS, log_entry_out, log_export_row
from gateway.shapes.answers import LogPageOut
from gateway.shapes.envelope import REFUSALS, Envelope, download
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.vocabulary import LOG_SOURCE, RECORD_STATUS, STOP_REASON, VOTE, EnumNames
from kbcore.words.said import said

router = APIRouter(prefix="/api/application", tags=["log"], responses=REFUSALS)

NONE = "none"  # in stop_reason, vote and source: "nothing recorded" (no stop reason, no vote, unknown source)
Int32 = Annotated[int, Path(ge=-(2**31), le=2**31 - 1)]
Names = Annotated[list[str] | None, Query()]
EXPORT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def _values(given: list[str] | None, names: EnumNames[Any], field: str, none_allowed: bool) -> list[Any]:
    """Repeated (``?status=a&status=b``) or comma-separated (``?status=a,b``) wire names."""
    wanted = [n.strip() for value in given or [] for n in value.split(",") if n.strip()]
    known = [*names.names, *([NONE] if none_allowed else [])]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ApiError(
            400, said("unknown_one", field=field, unknown_0_40=f"{unknown[0][:40]!r}", join_known=", ".join(known))
        )
    return [0 if n == NONE else names.value(n) for n in wanted]


def _sufficient(raw: str) -> bool | None:
    spelled = {"true": True, "1": True, "false": False, "0": False, "": None}
    if raw.strip().lower() not in spelled:
        raise ApiError(400, said("sufficient_must_be_true_false_got", raw_40=f"{raw[:40]!r}"))
    return spelled[raw.strip().lower()]


async def log_filter(  # async: no worker-thread hop (see backends)
    app_id: str,
    date_from: str = "",
    date_to: str = "",
    start_time: Annotated[str, Query(description="MaxKB's name for date_from")] = "",
    end_time: Annotated[str, Query(description="MaxKB's name for date_to")] = "",
    status: Names = None,
    stop_reason: Names = None,
    sufficient: str = "",
    vote: Names = None,
    source: Names = None,
    text: Annotated[str, Query(description="in the question or the answer, literally; at most 200 characters")] = "",
    abstract: Annotated[str, Query(description="MaxKB's name for text")] = "",
) -> pb.LogFilter:
    """Every filter of the log as query parameters (a route dependency). Dates are UTC days,
    YYYY-MM-DD, both inclusive; ``none`` in stop_reason/vote/source means nothing recorded."""
    message = pb.LogFilter(
        application_id=app_id,
        date_from=date_from or start_time,
        date_to=date_to or end_time,
        statuses=_values(status, RECORD_STATUS, "status", none_allowed=False),
        stop_reasons=_values(stop_reason, STOP_REASON, "stop_reason", none_allowed=True),
        votes=_values(vote, VOTE, "vote", none_allowed=True),
        sources=_values(source, LOG_SOURCE, "source", none_allowed=True),
        text=text or abstract,
    )
    wanted = _sufficient(sufficient)
    if wanted is not None:
        message.sufficient = wanted
    return message


Filter = Annotated[pb.LogFilter, Depends(log_filter)]


@router.get("/{app_id}/chat/{current_page}/{page_size}", response_model=Envelope[LogPageOut])
async def list_log(
    current_page: Int32, page_size: Int32, filters: Filter, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.operations.ListLog, pb.ListLogRequest(filter=filters, page=current_page, page_size=page_size)
    )
    records = [log_entry_out(e, language) for e in reply.entries]
    return ok(LogPageOut(records=records, current=current_page, size=page_size, total=reply.total).wire())


@router.post(
    "/{app_id}/chat/export",
    response_class=Response,
    responses=download(
        "the filtered log as a file, in the format asked",
        "text/csv",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
)
async def export_log(
    app_id: str,
    filters: Filter,
    backend: CallerBackend,
    format: Annotated[str, Query(description="xlsx (MaxKB's) or csv")] = "xlsx",
) -> Response:
    """The filtered log as a file, newest first and bounded by the chat service: the headers
    say how many records matched and how many the file holds."""
    if format not in EXPORT_TYPES:
        raise ApiError(
            400, said("format_must_be_one_got", join_export_types=", ".join(EXPORT_TYPES), format_20=f"{format[:20]!r}")
        )
    reply = await backend.unary(backend.chat.operations.ExportLog, pb.ListLogRequest(filter=filters))
    rows = [log_export_row(e) for e in reply.entries]
    content = csv_bytes(LOG_EXPORT_COLUMNS, rows) if format == "csv" else xlsx_bytes(LOG_EXPORT_COLUMNS, rows)
    headers = {
        "Content-Disposition": f'attachment; filename="chat-log-{app_id}.{format}"',
        "X-Log-Total": str(reply.total),
        "X-Log-Exported": str(len(rows)),
        "Access-Control-Expose-Headers": "X-Log-Total, X-Log-Exported, Content-Disposition",
    }
    return Response(content=content, media_type=EXPORT_TYPES[format], headers=headers)
