"""LoadContext's logic: read the watermark and recent turns, compact when over budget, assemble.

Compaction runs only when the estimate is over the budget and there are more uncompacted
turns than ``keep``; it merges the oldest turns into the summary in batches under the chat's
lease, and a failed summary call advances nothing (the context is then clipped instead).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from kbcore.db.lease import LeaseStore, new_holder
from kbcore.db.models import ChatContextState
from kbcore.models.base import ChatMessage, HistoryTurn, ModelClient, ModelError
from kbcore.settings import clamp
from services.context.assemble import Turn, assemble, estimate, messages_tokens
from services.context.history import HistoryStore

log = logging.getLogger(__name__)

DEFAULT_KEEP = 5
MAX_KEEP = 20
COMPACTION_BATCH = 8


@dataclass(frozen=True)
class ContextInfo:
    enabled: bool
    recent_rounds: int = 0
    compacted_rounds: int = 0
    revision: int = 0
    token_budget: int = 0
    estimated_tokens: int = 0


@dataclass(frozen=True)
class Compacting:
    rounds: int


@dataclass(frozen=True)
class LoadedContext:
    messages: list[ChatMessage]
    info: ContextInfo


def keep_rounds(dialogue_number: int | None) -> int:
    return DEFAULT_KEEP if dialogue_number is None else int(clamp(dialogue_number, 0, MAX_KEEP))


class ContextLoader:
    def __init__(self, history: HistoryStore, leases: LeaseStore, model: ModelClient, budget: int) -> None:
        self._history = history
        self._leases = leases
        self._model = model
        self._budget = budget

    async def load(
        self, chat_id: str, before_id: int | None, dialogue_number: int | None, lease_holder: str = ""
    ) -> AsyncIterator[Compacting | LoadedContext]:
        keep = keep_rounds(dialogue_number)
        if keep == 0:  # history off: neither turns nor the summary take part
            yield LoadedContext([], ContextInfo(enabled=False, token_budget=self._budget))
            return
        state = await self._history.state(chat_id)
        turns = await self._history.uncompacted_turns(chat_id, state.through_record_id, before_id)
        if self._needs_compaction(state, turns, keep):
            async with self._compaction_lease(chat_id, lease_holder) as held:
                if held:
                    # Re-read under the lease: a compaction that finished meanwhile moved the watermark.
                    state = await self._history.state(chat_id)
                    turns = await self._history.uncompacted_turns(chat_id, state.through_record_id, before_id)
                    if self._needs_compaction(state, turns, keep):
                        yield Compacting(len(turns) - keep)
                        state, turns = await self._compact(state, turns, keep)
                        if state.revision != (await self._history.state(chat_id)).revision:
                            # Another writer moved the watermark: read again so no turn is both
                            # in the summary and in the recent turns.
                            state = await self._history.state(chat_id)
                            turns = await self._history.uncompacted_turns(chat_id, state.through_record_id, before_id)
        messages = assemble(state.summary, turns, self._budget)
        yield LoadedContext(
            messages,
            ContextInfo(
                enabled=True,
                recent_rounds=len(turns),
                compacted_rounds=state.compacted_rounds,
                revision=state.revision,
                token_budget=self._budget,
                estimated_tokens=messages_tokens(messages),
            ),
        )

    def _needs_compaction(self, state: ChatContextState, turns: Sequence[Turn], keep: int) -> bool:
        """Strictly over the budget (equal does not compact), and something older than ``keep`` to merge."""
        return len(turns) > keep and estimate(state.summary, turns) > self._budget

    @contextlib.asynccontextmanager
    async def _compaction_lease(self, chat_id: str, lease_holder: str) -> AsyncIterator[bool]:
        """True when we may compact: the caller's own lease, or one we take now."""
        if lease_holder and await self._leases.is_held_by(chat_id, lease_holder):
            yield True
            return
        holder = new_holder("compact")
        if not await self._leases.try_acquire(chat_id, holder, "compaction"):
            log.info("chat %s is busy; serving a clipped context without compacting", chat_id)
            yield False
            return
        try:
            yield True
        finally:
            await self._leases.release(chat_id, holder)

    async def _compact(
        self, state: ChatContextState, turns: list[Turn], keep: int
    ) -> tuple[ChatContextState, list[Turn]]:
        while len(turns) > keep and estimate(state.summary, turns) > self._budget:
            batch = turns[: min(COMPACTION_BATCH, len(turns) - keep)]
            try:
                summary = await self._model.summarize(state.summary, [HistoryTurn(t.question, t.answer) for t in batch])
            except ModelError as exc:
                log.warning("summary failed; the watermark stays at %d: %s", state.through_record_id, exc)
                break
            if not summary.strip():
                log.warning("summary came back empty; the watermark stays at %d", state.through_record_id)
                break
            advanced = await self._history.advance(state, summary.strip(), batch[-1].id, len(batch))
            if advanced is None:  # someone else compacted this chat meanwhile
                break
            state, turns = advanced, turns[len(batch) :]
        return state, turns
