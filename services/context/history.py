"""Reading turns and the compaction watermark, and advancing the watermark atomically."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.models import FINISHED_STATUSES, Chat, ChatContextState, ChatRecord
from kbcore.errors import CorruptData
from services.context.assemble import Turn


class CorruptState(CorruptData):
    """The stored compaction state cannot be used (it would feed nonsense to every later turn)."""


class HistoryStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def chat_exists(self, chat_id: str) -> bool:
        return await run_read(self._sessions, lambda session: session.get(Chat, chat_id) is not None)

    async def state(self, chat_id: str) -> ChatContextState:
        return await run_read(self._sessions, lambda session: _state(session, chat_id))

    async def read(self, chat_id: str, before_id: int | None) -> tuple[ChatContextState, list[Turn]]:
        """The watermark and the finished turns after it (before ``before_id``), in one session."""

        def work(session: Session) -> tuple[ChatContextState, list[Turn]]:
            state = _state(session, chat_id)
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


def _state(session: Session, chat_id: str) -> ChatContextState:
    state = session.get(ChatContextState, chat_id)
    if state is None:
        return ChatContextState(chat_id=chat_id, summary="", through_record_id=0, compacted_rounds=0, revision=0)
    if state.summary is None or state.through_record_id is None or state.through_record_id < 0:
        raise CorruptState(f"the compaction state of chat {chat_id} is corrupted (no summary or watermark)")
    if state.compacted_rounds < 0 or state.revision < 0:
        raise CorruptState(f"the compaction state of chat {chat_id} is corrupted (negative counters)")
    if state.compacted_rounds > 0 and not state.summary.strip():
        raise CorruptState(
            f"the compaction state of chat {chat_id} is corrupted: {state.compacted_rounds} rounds "
            "are marked as compacted but their summary is empty"
        )
    return state


def _turns(session: Session, chat_id: str, after_id: int, before_id: int | None) -> list[Turn]:
    """Finished turns with after_id < id < before_id, oldest first.

    Only answered or stopped records count: a running record is the question being asked,
    and a failed or interrupted one holds whatever an error left behind. Empty answers and
    answers a re-chat replaced never count either.
    """
    query = select(ChatRecord.id, ChatRecord.question, ChatRecord.answer).where(
        ChatRecord.chat_id == chat_id,
        ChatRecord.id > after_id,
        ChatRecord.status.in_(list(FINISHED_STATUSES)),
        ChatRecord.answer != "",
        ChatRecord.in_history.is_(True),
    )
    if before_id is not None:
        query = query.where(ChatRecord.id < before_id)
    return [Turn(int(r.id), r.question, r.answer) for r in session.execute(query.order_by(ChatRecord.id)).all()]
