"""LoadContext's and Compact's logic: read the watermark and recent turns, compact when over
budget, assemble.

Compaction runs only when the estimate is over the budget and there are more uncompacted
turns than ``keep``; it merges the oldest turns into the summary in batches under the chat's
lease, and a failed summary call advances nothing (the context is then clipped instead).
LoadContext and Compact share one compaction path, so they cannot follow different rules.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from kbcore.db.lease import ChatBusy, LeaseStore, new_holder
from kbcore.db.tables import ChatContextState
from kbcore.errors import Unavailable
from kbcore.models.base import ChatMessage, HistoryTurn, ModelClient, ModelError
from kbcore.settings import clamp
from kbcore.words.said import Said, said
from services.context.assemble import Turn, assemble, estimate, messages_tokens
from services.context.history import HistoryStore

log = logging.getLogger(__name__)

Advance = Callable[[ChatContextState, str, int, int], Awaitable[ChatContextState | None]]
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


@dataclass(frozen=True)
class Compacted:
    """Where a compaction left the chat: the watermark, the turns after it, what this run merged."""

    state: ChatContextState
    turns: list[Turn]
    rounds: int = 0
    failure: Said | None = None  # why the summary could not be made; None when nothing failed


@dataclass(frozen=True)
class CompactResult:
    info: ContextInfo
    compacted_now: int


class CompactionFailed(Unavailable):
    """The summary model failed during an explicit Compact; what was merged before it stays merged."""


def keep_rounds(dialogue_number: int | None) -> int:
    return DEFAULT_KEEP if dialogue_number is None else int(clamp(dialogue_number, 0, MAX_KEEP))


class ContextLoader:
    def __init__(self, history: HistoryStore, leases: LeaseStore, model: ModelClient, budget: int) -> None:
        self._history = history
        self._leases = leases
        self._model = model
        self._budget = budget

    async def load(
        self,
        chat_id: str,
        before_id: int | None,
        dialogue_number: int | None,
        lease_holder: str = "",
        model: ModelClient | None = None,
    ) -> AsyncIterator[Compacting | LoadedContext]:
        """``model`` writes the summaries (the application's auxiliary model); None is the
        deployment's. NotFound, before anything is yielded, when the chat does not exist."""
        keep = keep_rounds(dialogue_number)
        if keep == 0:  # history off: neither turns nor the summary take part
            await self._history.require_chat(chat_id)
            yield self._disabled()
            return
        state, turns = await self._read(chat_id, before_id)
        if self._needs_compaction(state, turns, keep):
            async with self._compaction_lease(chat_id, lease_holder) as held:
                if not held:
                    log.info("chat %s is busy; serving a clipped context without compacting", chat_id)
                else:
                    async for event in self._compact_held(chat_id, before_id, keep, model or self._model):
                        if isinstance(event, Compacting):
                            yield event
                        else:
                            state, turns = event.state, event.turns
        yield self._loaded(state, turns)

    async def compact(
        self, chat_id: str, dialogue_number: int | None, model: ModelClient | None = None
    ) -> CompactResult:
        """Compact now over every finished record, by the rules of ``load``.

        Raises ChatBusy when another question or compaction holds the chat (never waits), and
        CompactionFailed when the summary model failed, so a job does not mistake it for success.
        """
        keep = keep_rounds(dialogue_number)
        if keep == 0:  # history off: there is nothing a load would use, so nothing to compact
            return CompactResult(self._disabled().info, 0)
        async with self._compaction_lease(chat_id, "") as held:
            if not held:
                raise ChatBusy(chat_id)
            events = self._compact_held(chat_id, None, keep, model or self._model)
            done = [event async for event in events if isinstance(event, Compacted)]
        result = done[-1]
        if result.failure:
            raise CompactionFailed(
                said(
                    "summarizing_chat_failed_after_merging_rounds",
                    chat_id=chat_id,
                    result_rounds=result.rounds,
                    result_state_revision=result.state.revision,
                    result_failure=result.failure,
                )
            )
        return CompactResult(self._loaded(result.state, result.turns).info, result.rounds)

    async def load_given(
        self, messages: Sequence[ChatMessage], dialogue_number: int | None, model: ModelClient | None = None
    ) -> AsyncIterator[Compacting | LoadedContext]:
        """The same rules over turns a client sent (the OpenAI protocol keeps history client-side):
        over budget, the oldest turns are summarised in memory; nothing is written anywhere."""
        keep = keep_rounds(dialogue_number)
        if keep == 0:
            yield self._disabled()
            return
        state = ChatContextState(summary="", through_record_id=0, compacted_rounds=0, revision=0)
        turns = pair_turns(messages)
        if self._needs_compaction(state, turns, keep):
            yield Compacting(len(turns) - keep)
            result = await self._compact(state, turns, keep, _advance_in_memory, model or self._model)
            state, turns = result.state, result.turns
        yield self._loaded(state, turns)

    def _disabled(self) -> LoadedContext:
        return LoadedContext([], ContextInfo(enabled=False, token_budget=self._budget))

    def _loaded(self, state: ChatContextState, turns: Sequence[Turn]) -> LoadedContext:
        messages = assemble(state.summary, turns, self._budget)
        return LoadedContext(
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

    async def _read(self, chat_id: str, before_id: int | None) -> tuple[ChatContextState, list[Turn]]:
        return await self._history.read(chat_id, before_id)

    def _needs_compaction(self, state: ChatContextState, turns: Sequence[Turn], keep: int) -> bool:
        """Strictly over the budget (equal does not compact), and something older than ``keep`` to merge."""
        return len(turns) > keep and estimate(state.summary, turns) > self._budget

    async def _compact_held(
        self, chat_id: str, before_id: int | None, keep: int, model: ModelClient
    ) -> AsyncIterator[Compacting | Compacted]:
        """With the lease held: re-read, announce and run the compaction if still needed, report where it left off."""
        # Re-read under the lease: a compaction that finished meanwhile moved the watermark.
        state, turns = await self._read(chat_id, before_id)
        if not self._needs_compaction(state, turns, keep):
            yield Compacted(state, turns)
            return
        yield Compacting(len(turns) - keep)
        result = await self._compact(state, turns, keep, self._history.advance, model)
        if result.state.revision != (await self._history.state(chat_id)).revision:
            # Another writer moved the watermark: read again so no turn is both in the summary
            # and in the recent turns.
            state, turns = await self._read(chat_id, before_id)
            result = Compacted(state, turns, result.rounds, result.failure)
        yield result

    @contextlib.asynccontextmanager
    async def _compaction_lease(self, chat_id: str, lease_holder: str) -> AsyncIterator[bool]:
        """True when we may compact: the caller's own lease, or one we take now (renewed while held)."""
        if lease_holder and await self._leases.is_held_by(chat_id, lease_holder):
            yield True
            return
        lease = contextlib.AsyncExitStack()
        try:
            await lease.enter_async_context(self._leases.hold(chat_id, new_holder("compact"), "compaction"))
        except ChatBusy:
            yield False
            return
        async with lease:
            yield True

    async def _compact(
        self, state: ChatContextState, turns: list[Turn], keep: int, advance: Advance, model: ModelClient
    ) -> Compacted:
        """Merge the oldest turns into the summary, batch by batch, while over budget; ``advance``
        keeps each new summary (in the chat's row, or only in memory for a client's history) and
        answers None when someone else moved the watermark meanwhile."""
        merged = 0
        while len(turns) > keep and estimate(state.summary, turns) > self._budget:
            batch = turns[: min(COMPACTION_BATCH, len(turns) - keep)]
            try:
                summary = await model.summarize(state.summary, [HistoryTurn(t.question, t.answer) for t in batch])
            except ModelError as exc:
                log.warning("summary failed; the watermark stays at %d: %s", state.through_record_id, exc)
                return Compacted(state, turns, merged, exc.words)
            if not summary.strip():
                log.warning("summary came back empty; the watermark stays at %d", state.through_record_id)
                return Compacted(state, turns, merged, said("model_returned_empty_summary"))
            advanced = await advance(state, summary.strip(), batch[-1].id, len(batch))
            if advanced is None:  # someone else compacted this chat meanwhile
                break
            state, turns, merged = advanced, turns[len(batch) :], merged + len(batch)
        return Compacted(state, turns, merged)


async def _advance_in_memory(
    old: ChatContextState, summary: str, through_id: int, rounds: int
) -> ChatContextState | None:
    """A summary of a client's own history: used for this question, written nowhere."""
    return ChatContextState(
        summary=summary, through_record_id=through_id, compacted_rounds=old.compacted_rounds + rounds, revision=0
    )


def pair_turns(messages: Sequence[ChatMessage]) -> list[Turn]:
    """User/assistant messages as turns, in order: a question without an answer keeps an empty
    answer, an answer without a question an empty question; other roles are not history."""
    turns: list[Turn] = []
    for message in messages:
        if message.role == "user":
            turns.append(Turn(len(turns) + 1, message.content, ""))
        elif message.role == "assistant":
            if turns and not turns[-1].answer:
                last = turns[-1]
                turns[-1] = Turn(last.id, last.question, message.content)
            else:
                turns.append(Turn(len(turns) + 1, "", message.content))
    return turns
