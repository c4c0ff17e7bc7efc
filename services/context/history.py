"""Reading turns and the compaction watermark, and advancing the watermark atomically."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.tables import FINISHED_STATUSES, Chat, ChatContextState
from kbcore.db.tables import RECORD_TABLE as RECORDS
from kbcore.errors import CorruptData, NotFound
from kbcore.words.said import said
from services.context.assemble import Turn

# Every question reads its chat's watermark and turns: statements built once (see
# ``services/chat/record_statements.py`` for why), the chat's existence checked by the same query.
_CHAT_AND_STATE = (
    select(Chat.id, ChatContextState)
    .outerjoin(ChatContextState, ChatContextState.chat_id == Chat.id)
    .where(Chat.id == bindparam("b_chat_id"))
)
# Only answered or stopped records count: a running record is the question being asked, and a
# failed or interrupted one holds whatever an error left behind. Empty answers and answers a
# re-chat replaced never count either.
_TURNS_AFTER = (
    select(RECORDS.c.id, RECORDS.c.question, RECORDS.c.answer)
    .where(
        RECORDS.c.chat_id == bindparam("b_chat_id"),
        RECORDS.c.id > bindparam("b_after_id"),
        RECORDS.c.status.in_(list(FINISHED_STATUSES)),
        RECORDS.c.answer != "",
        RECORDS.c.in_history.is_(True),
    )
    .order_by(RECORDS.c.id)
)
_TURNS_BETWEEN = _TURNS_AFTER.where(RECORDS.c.id < bindparam("b_before_id"))


class CorruptState(CorruptData):
    """The stored compaction state cannot be used (it would feed nonsense to every later turn)."""


class HistoryStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def require_chat(self, chat_id: str) -> None:
        """NotFound when the chat does not exist (``read`` checks it by itself)."""
        if not await run_read(self._sessions, lambda session: session.get(Chat, chat_id) is not None):
            raise _no_chat(chat_id)

    async def state(self, chat_id: str) -> ChatContextState:
        return await run_read(self._sessions, lambda session: _state(session, chat_id))

    async def read(self, chat_id: str, before_id: int | None) -> tuple[ChatContextState, list[Turn]]:
        """The watermark and the finished turns after it (before ``before_id``), in one session;
        NotFound when the chat does not exist."""

        def work(session: Session) -> tuple[ChatContextState, list[Turn]]:
            row = session.execute(_CHAT_AND_STATE, {"b_chat_id": chat_id}).first()
            if row is None:
                raise _no_chat(chat_id)
            state = _checked(chat_id, row[1])
            return state, _turns(session, chat_id, state.through_record_id, before_id)

        return await run_read(self._sessions, work)

    async def advance(
        self, old: ChatContextState, summary: str, through_id: int, rounds: int
    ) -> ChatContextState | None:
        """Store the new summary and watermark in one transaction, only if nobody advanced it meanwhile."""
        values = {
            "summary": summary,
            "through_record_id": through_id,
            "compacted_rounds": old.compacted_rounds + rounds,
            "revision": old.revision + 1,
        }
        try:
            async with self._sessions.begin() as session:
                if old.revision == 0 and await session.get(ChatContextState, old.chat_id) is None:
                    session.add(ChatContextState(chat_id=old.chat_id, **values))
                else:
                    result = await session.execute(
                        update(ChatContextState)
                        .where(ChatContextState.chat_id == old.chat_id, ChatContextState.revision == old.revision)
                        .values(**values)
                    )
                    if not result.rowcount:  # type: ignore[attr-defined]
                        return None
        except IntegrityError:
            return None
        return ChatContextState(chat_id=old.chat_id, **values)


def _no_chat(chat_id: str) -> NotFound:
    return NotFound(said("chat_does_not_exist", chat_id=chat_id))


def _state(session: Session, chat_id: str) -> ChatContextState:
    return _checked(chat_id, session.get(ChatContextState, chat_id))


def _checked(chat_id: str, state: ChatContextState | None) -> ChatContextState:
    """The stored state, or the empty one of a chat never compacted; CorruptState when unusable."""
    if state is None:
        return ChatContextState(chat_id=chat_id, summary="", through_record_id=0, compacted_rounds=0, revision=0)
    if state.summary is None or state.through_record_id is None or state.through_record_id < 0:
        raise CorruptState(said("compaction_state_chat_corrupted_no_summary", chat_id=chat_id))
    if state.compacted_rounds < 0 or state.revision < 0:
        raise CorruptState(said("compaction_state_chat_corrupted_negative_counters", chat_id=chat_id))
    if state.compacted_rounds > 0 and not state.summary.strip():
        raise CorruptState(
            said(
                "compaction_state_chat_corrupted_rounds_are",
                chat_id=chat_id,
                state_compacted_rounds=state.compacted_rounds,
            )
        )
    return state


def _turns(session: Session, chat_id: str, after_id: int, before_id: int | None) -> list[Turn]:
    """Finished turns with after_id < id < before_id, oldest first."""
    params: dict[str, object] = {"b_chat_id": chat_id, "b_after_id": after_id}
    statement = _TURNS_AFTER
    if before_id is not None:
        statement, params["b_before_id"] = _TURNS_BETWEEN, before_id
    return [Turn(int(r.id), r.question, r.answer) for r in session.execute(statement, params).all()]
