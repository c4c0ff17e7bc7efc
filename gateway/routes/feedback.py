"""Votes on answers and the usage figures, in MaxKB v1's shapes.

The vote is MaxKB's ``PUT /api/application/{id}/chat/{chat_id}/chat_record/{record_id}/vote``
with ``{"vote_status": "0" | "1" | "-1"}`` (like, oppose, cancel), plus an optional ``reason``;
unlike MaxKB, a vote can be changed without cancelling it first. The one route serves every
caller the chat routes serve (the operator, an application API key, a share-link visitor):
the chat service decides from the bearer token whose vote it is and whether the record is theirs.

The usage figures mirror MaxKB's ``GET /api/application/{id}/statistics/chat_record_aggregate_trend``
(``start_time``/``end_time`` as ``YYYY-MM-DD``): one object per day with MaxKB's fields
(``day``, ``chat_record_count``, ``star_num``, ``trample_num``, ``tokens_num``) and ours.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, field_validator

from gateway.backends import CallerBackend
from gateway.errors import ok
from gateway.presenter import VOTE_OF_STATUS, usage_day_out, vote_out
from gateway.routes.chat import RecordId
from gateway.shapes.answers import UsageDayOut, VoteOut
from gateway.shapes.envelope import REFUSALS, Envelope
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.words.said import said

router = APIRouter(prefix="/api/application", tags=["feedback"], responses=REFUSALS)

# Long enough for any date spelling a person might try; the chat service says what is wrong with it.
DateText = Annotated[str, Query(max_length=40)]


class VoteBody(BaseModel):
    vote_status: Literal["0", "1", "-1"]
    # The chat service refuses more than 500 characters with a sentence that says so; this
    # only keeps a megabyte of text from travelling that far.
    reason: str = Field(default="", max_length=10_000)

    @field_validator("vote_status", mode="before")
    @classmethod
    def _known(cls, value: object) -> str:
        """MaxKB's strings, or the same numbers unquoted (its serializer accepts both)."""
        text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
        if text not in VOTE_OF_STATUS:
            raise ValueError(said("must_be_0_like_1_oppose"))
        return text


@router.put("/{app_id}/chat/{chat_id}/chat_record/{record_id}/vote", response_model=Envelope[VoteOut])
async def vote(app_id: str, chat_id: str, record_id: RecordId, body: VoteBody, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.operations.VoteRecord,
        pb.VoteRecordRequest(
            application_id=app_id,
            chat_id=chat_id,
            record_id=str(record_id),
            vote=VOTE_OF_STATUS[body.vote_status],
            reason=body.reason,
        ),
    )
    return ok(vote_out(reply.vote, reply.reason).wire())


@router.get("/{app_id}/statistics/chat_record_aggregate_trend", response_model=Envelope[list[UsageDayOut]])
async def usage_trend(
    app_id: str, backend: CallerBackend, start_time: DateText = "", end_time: DateText = ""
) -> JSONResponse:
    """Every UTC day from ``start_time`` to ``end_time`` (at most 366; the last 7 days when
    unset), empty days included. The operator's."""
    reply = await backend.unary(
        backend.chat.operations.Usage, pb.UsageRequest(application_id=app_id, date_from=start_time, date_to=end_time)
    )
    return ok([usage_day_out(day).wire() for day in reply.days])
