"""Votes and usage figures: VoteRecord for anyone who can see the answer, Usage for the
operator, and each caller's own vote on the records it reads (a part of ``ChatServicer``, kept
apart so each module has one job)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.db.tables import Chat
from kbcore.rpc.error_mapping import Context, unary_errors
from kbcore.vocabulary import VOTE
from services.chat.access.identity import current_caller
from services.chat.access.rules import hiding_absence, require_operator
from services.chat.admin.days import day_range
from services.chat.admin.usage_report import UsageReport
from services.chat.admin.votes import VoteBook, requested_vote, voter_of
from services.chat.answering.record_ids import record_id
from services.chat.store import ChatStore

# A chart's range: a year (a leap year's every day); a week when the request names none.
MAX_USAGE_DAYS = 366
DEFAULT_USAGE_DAYS = 7


class FeedbackRpcs:
    _store: ChatStore
    # ChatServicer's: the chat, once the caller is known to be allowed to see it.
    _chat: Callable[..., Awaitable[Chat]]

    @unary_errors
    async def VoteRecord(self, request: pb.VoteRecordRequest, context: Context) -> pb.VoteRecordResponse:
        wanted = requested_vote(request.vote, request.reason)
        number = record_id(request.record_id)
        chat = await self._chat(request.chat_id, request.application_id)
        caller = current_caller()
        with hiding_absence(caller):
            await VoteBook(self._store.sessions).cast(chat.id, number, voter_of(caller), wanted)
        return pb.VoteRecordResponse(vote=VOTE.value(wanted.vote, default=pb.VOTE_UNSPECIFIED), reason=wanted.reason)

    @unary_errors
    async def Usage(self, request: pb.UsageRequest, context: Context) -> pb.UsageResponse:
        require_operator(current_caller())
        days = day_range(request.date_from, request.date_to, MAX_USAGE_DAYS, DEFAULT_USAGE_DAYS)
        application = await self._store.get_application(request.application_id)
        return pb.UsageResponse(days=await UsageReport(self._store.sessions).days(application.id, days))

    async def _with_own_votes(self, records: Sequence[pb.ChatRecord]) -> None:
        """Each record as its reader sees it: with the reader's own vote, for the chat page."""
        votes = await VoteBook(self._store.sessions).own(voter_of(current_caller()), [int(r.id) for r in records])
        for record in records:
            mine = votes.get(int(record.id))
            if mine is not None:
                record.vote = VOTE.value(mine.vote, default=pb.VOTE_UNSPECIFIED)
                record.vote_reason = mine.reason
