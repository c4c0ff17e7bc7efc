"""One question end to end (docs/architecture.md, the question's path): checks → lease → record → context → retrieval →
generation → record saved → done. Whatever happens, the record keeps what exists."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import grpc
from sqlalchemy.sql.expression import Executable

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.context.v1 import context_service_pb2, context_service_pb2_grpc
from grpc_stubs.retrieval.v1 import retrieval_service_pb2
from kbcore.db.lease import ChatBusy, LeaseStore, new_holder
from kbcore.db.tables import Application, RecordSource, RecordStatus
from kbcore.metrics.catalog import LEASE_CONFLICTS, observe_question
from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    ModelClient,
    ReasoningDelta,
)
from kbcore.models.endpoints import EndpointClients
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from kbcore.telemetry.log_context import bind_record, question_trace_id
from kbcore.text.tokens import count_tokens
from kbcore.vocabulary import ROLE, STOP_REASON
from services.chat.answering.delta_pump import DeltaPump, Pacing, has_text
from services.chat.answering.failures import CLIENT_GONE, STOPPED_BY_USER, Ending, ending_for
from services.chat.answering.prompt import build_messages
from services.chat.answering.running import RunningQuestions
from services.chat.answering.saving import save_outcome
from services.chat.answering.stop_listener import StopListener
from services.chat.answering.stopping import PartialRounds, until_stopped
from services.chat.chat_messages import application_message, part_support
from services.chat.record_details import log_columns, record_details, stored
from services.chat.share_page import page_message
from services.chat.store import ChatStore, NewQuestion, StartedQuestion

log = logging.getLogger(__name__)
ContextCall: TypeAlias = (
    "grpc.aio.UnaryStreamCall[context_service_pb2.LoadContextRequest, context_service_pb2.LoadContextResponse]"
)
RetrieveCall: TypeAlias = (
    "grpc.aio.UnaryStreamCall[retrieval_service_pb2.RetrieveRequest, retrieval_service_pb2.RetrieveResponse]"
)


@dataclass
class Upstreams:
    context: context_service_pb2_grpc.ContextServiceStub
    retrieval: RetrievalStubs


@dataclass
class Outcome:
    """What exists so far; saved with the record whatever the ending."""

    answer: list[str] = field(default_factory=list)
    # The model's thinking, kept apart from the answer: in the record's details, never its text.
    reasoning: list[str] = field(default_factory=list)
    model: ModelClient | None = None  # the model that answered; None = none was called
    context: context_service_pb2.ConversationContext | None = None
    retrieval: common_pb2.RetrievalResult | None = None
    message_tokens: int = 0
    answer_tokens: int = 0
    # The rounds as they ran: kept when a Stop comes before the retrieval's result.
    partial: PartialRounds = field(default_factory=PartialRounds)
    generation_started: float | None = None  # time.monotonic() when the model was asked; None: never


@dataclass(frozen=True)
class Question:
    """What was asked, and what came with it."""

    text: str
    re_chat: bool = False
    # The dialogue as the client holds it (OpenAI protocol); None: the chat's stored history.
    client_history: list[common_pb2.Message] | None = None
    source: str = RecordSource.CHAT
    # The log's columns for who asked and through what (``services.chat.admin.conversation_log.record_origin``).
    origin: Mapping[str, str] = field(default_factory=dict)
    # Counts the question against the credential that asked it, in the transaction that records
    # it (``services.chat.access.credential_admin.counted_use``); None: nothing to count.
    counted: Executable | None = None
    # The caller reads ``AskResponse.deltas``: deltas that arrived together go as one message.
    batch_deltas: bool = False
    # The caller is a visitor the application hides sources from: the last event carries none.
    hide_sources: bool = False


class AskFlow:
    def __init__(
        self,
        settings: Settings,
        store: ChatStore,
        leases: LeaseStore,
        upstreams: Upstreams,
        model: ModelClient,
        running: RunningQuestions,
        endpoints: EndpointClients | None = None,
    ) -> None:
        """``model`` is the deployment's; ``endpoints`` the registered ones an application may choose."""
        self._settings = settings
        self._store = store
        self._leases = leases
        self._up = upstreams
        self._model = model
        self._running = running
        self._endpoints = endpoints
        self._stops = StopListener(leases)  # stops that reach this process's questions through the lease table
        # Shared by this process's answers: under load they are paced (``delta_pump``).
        self._pacing = Pacing(settings.answer_pacing_ms / 1000, settings.answer_pacing_from)

    async def run(
        self,
        application: Application,
        chat_id: str,
        question: Question,
        admit: Callable[[], Awaitable[None]] | None = None,
    ) -> AsyncGenerator[pb.AskResponse, None]:
        """``admit`` runs once the chat is held and before the record exists (the quota check)."""
        holder = new_holder("ask")
        started = await self._begin_or_undo(chat_id, question, holder, admit)
        bind_record(started.record.id)  # on this question's log lines and upstream calls from now on
        # Nothing awaits between taking the lease and entering ``held``, which releases it.
        async with self._leases.held(chat_id, holder) as lease_lost:
            stop_requested = self._running.register(chat_id)
            try:
                # Closed here, not by the garbage collector: the record is saved before the lease goes.
                answer = self._answer(application, chat_id, question, started, stop_requested)
                with self._stops.watching(chat_id, holder, stop_requested, lease_lost):
                    async with contextlib.aclosing(answer) as events:
                        async for event in events:
                            yield event
            finally:
                self._running.unregister(chat_id, stop_requested)

    async def _begin(
        self,
        chat_id: str,
        question: Question,
        holder: str,
        admit: Callable[[], Awaitable[None]] | None,
    ) -> StartedQuestion:
        """The chat's lease and the question's record: one transaction, unless a quota check
        has to run between the two (it must not count a question refused as busy)."""
        if admit is None:
            return await self._store.begin_question(self._leases, _new_question(chat_id, question, holder))
        if not await self._leases.try_acquire(chat_id, holder, "question"):
            raise ChatBusy(chat_id)
        try:
            await admit()
            return await self._store.record_question(_new_question(chat_id, question, holder))
        except BaseException:
            await asyncio.shield(self._leases.release(chat_id, holder))
            raise

    async def _begin_or_undo(
        self,
        chat_id: str,
        question: Question,
        holder: str,
        admit: Callable[[], Awaitable[None]] | None,
    ) -> StartedQuestion:
        """``_begin``, seen through even when the caller goes away while it commits (a client that
        closes its socket right after the POST): the lease taken and the record inserted are then
        closed (``stopped``) and released here, not left ``running`` for the lease's lifetime."""
        begun = asyncio.ensure_future(self._begin(chat_id, question, holder, admit))
        try:
            return await asyncio.shield(begun)
        except ChatBusy:
            LEASE_CONFLICTS.inc()
            raise
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._undo_begin(begun, chat_id, holder))
            raise

    async def _undo_begin(self, begun: asyncio.Future[StartedQuestion], chat_id: str, holder: str) -> None:
        try:
            started = await begun
            values = {"status": RecordStatus.STOPPED, "error": CLIENT_GONE}
            await save_outcome(self._store, started.record.id, values)
        finally:
            await self._leases.release(chat_id, holder)

    async def _answer(
        self,
        application: Application,
        chat_id: str,
        asked: Question,
        question_started: StartedQuestion,
        stop_requested: asyncio.Event,
    ) -> AsyncGenerator[pb.AskResponse, None]:
        started = time.monotonic()
        question = asked.text
        record = question_started.record
        # The upstream calls go out before the first event: sending an event waits for the send
        # to complete. The first question of a chat has no history, so it is searched as asked:
        # retrieval runs while the context loads; its events follow the context's.
        calls = _Calls(self._start_context(application, chat_id, record.id, record.holder, asked.client_history))
        if question_started.first_in_chat and not asked.client_history:
            calls.retrieve = self._start_retrieve(application, question, [])
        outcome = Outcome()
        ending = Ending(RecordStatus.ANSWERED)
        try:
            # From the first event on, whatever ends the stream closes the record: a caller that
            # leaves at once leaves a ``stopped`` record, never a ``running`` one.
            progress = page_message(application.page_setting or {}).progress
            yield pb.AskResponse(started=pb.RecordStarted(record_id=str(record.id), chat_id=chat_id, progress=progress))
            # The context phase starts now: said here, not after a round trip to the context service.
            yield pb.AskResponse(progress=common_pb2.Progress(context=common_pb2.ContextLoading()))
            async for event in self._steps(application, asked, calls, outcome, stop_requested):
                yield event
            if stop_requested.is_set():
                ending = Ending(RecordStatus.STOPPED, STOPPED_BY_USER)
        except GeneratorExit:  # the stream was closed under us: the caller has gone
            ending = Ending(RecordStatus.STOPPED, CLIENT_GONE)
            raise
        except (Exception, asyncio.CancelledError) as exc:
            ending = ending_for(exc, chat_id)
            if ending.raise_ is None:
                raise
            raise ending.raise_ from exc
        finally:
            calls.cancel()  # a no-op for calls that have finished
            # Saved before `done` is sent (and even when the caller has gone), so a follow-up
            # asked the moment the stream ends always sees this answer.
            unsaved = await asyncio.shield(self._save(record.id, outcome, ending, time.monotonic() - started))
        if unsaved is not None:  # never `done` for an answer that is not saved: the error instead
            raise unsaved
        yield _done(record.id, outcome, asked.hide_sources)

    async def _steps(
        self,
        application: Application,
        asked: Question,
        calls: _Calls,
        outcome: Outcome,
        stop_requested: asyncio.Event,
    ) -> AsyncIterator[pb.AskResponse]:
        """Context, then retrieval (started now unless it already runs), then generation. A Stop
        ends whichever phase runs at once; the calls still open are cancelled by the caller."""
        async for event in until_stopped(self._load_context(calls.context, outcome), stop_requested):
            yield event
        if stop_requested.is_set():
            return
        if calls.retrieve is None:
            history = list(outcome.context.messages) if outcome.context else []
            calls.retrieve = self._start_retrieve(application, asked.text, history)
        async for event in until_stopped(self._retrieve(calls.retrieve, outcome), stop_requested):
            yield event
        if stop_requested.is_set():
            return
        async for event in self._generate(application, asked, outcome, stop_requested):
            yield event

    def _start_context(
        self,
        application: Application,
        chat_id: str,
        record_id: int,
        holder: str,
        client_history: list[common_pb2.Message] | None,
    ) -> ContextCall:
        """The LoadContext call, sent now; its responses wait in the channel until read."""
        request = context_service_pb2.LoadContextRequest(
            chat_id=chat_id,
            before_record_id=record_id,
            dialogue_number=application.dialogue_number,
            lease_holder=holder,
            aux_model_id=_chosen_model(application, "aux_model_id"),  # its summaries, when this load compacts
        )
        if client_history is not None:  # even an empty one: the chat's records must not be read
            request.client_turns.SetInParent()
            request.client_turns.messages.extend(client_history)
        return self._up.context.LoadContext(request, timeout=self._settings.ask_timeout)

    async def _load_context(self, call: ContextCall, outcome: Outcome) -> AsyncGenerator[pb.AskResponse, None]:
        async for response in call:
            if response.HasField("progress"):
                yield pb.AskResponse(progress=response.progress)
            else:
                outcome.context = response.context

    def _start_retrieve(
        self, application: Application, question: str, history: list[common_pb2.Message]
    ) -> RetrieveCall:
        """The Retrieve call, sent now; its responses wait in the channel until read."""
        request = retrieval_service_pb2.RetrieveRequest(
            dataset_ids=list(application.dataset_ids or []),
            search=application_message(application).search,
            question=question,
            history=history,
            aux_model_id=_chosen_model(application, "aux_model_id"),  # rewrite, assessment, follow-up queries
            rerank_model_id=_chosen_model(application, "rerank_model_id"),  # "" = no rerank
        )
        return self._up.retrieval.search.Retrieve(request, timeout=self._settings.ask_timeout)

    async def _retrieve(self, call: RetrieveCall, outcome: Outcome) -> AsyncGenerator[pb.AskResponse, None]:
        async for response in call:
            if response.HasField("progress"):
                outcome.partial.note(response.progress)
                yield pb.AskResponse(progress=response.progress)
            else:
                outcome.retrieval = response.result

    async def _generate(
        self, application: Application, asked: Question, outcome: Outcome, stop_requested: asyncio.Event
    ) -> AsyncIterator[pb.AskResponse]:
        result = outcome.retrieval
        assert result is not None and outcome.context is not None
        request = self._generation_request(application, asked.text, result, outcome.context)
        model = outcome.model = await self._answering_model(application)
        outcome.generation_started = time.monotonic()
        stream = model.generate(request)
        deltas = stream.deltas
        # The request goes out now, while the progress event below is being sent: read by a pump
        # when the caller takes deltas that arrived together as one message, else requested.
        pump = DeltaPump(deltas, self._pacing) if asked.batch_deltas else None
        first = None if pump is not None else asyncio.ensure_future(anext(deltas))
        try:
            generating = common_pb2.Generating(rounds=len(result.rounds), stop_reason=result.stop_reason)
            yield pb.AskResponse(progress=common_pb2.Progress(generating=generating))
            reading = pump.batches() if pump is not None else _deltas(first, deltas)
            # A Stop ends the stream at once, even while the model has yet to send its next delta.
            async for found in until_stopped(reading, stop_requested):
                for delta in found:
                    if isinstance(delta, ReasoningDelta):
                        outcome.reasoning.append(delta.text)
                    else:
                        outcome.answer.append(delta)
                yield _delta_response(found)
        finally:
            if pump is not None:
                await pump.aclose()
            await _close_stream(first, deltas)
            prompt_tokens = stream.usage.prompt_tokens or sum(count_tokens(m.content) for m in request.messages)
            outcome.message_tokens = prompt_tokens
            outcome.answer_tokens = stream.usage.completion_tokens or count_tokens("".join(outcome.answer))

    async def _answering_model(self, application: Application) -> ModelClient:
        """The application's chosen chat model, else the deployment's."""
        chosen = _chosen_model(application, "chat_model_id")
        if self._endpoints is None or not chosen:
            return self._model
        return await self._endpoints.client(chosen)

    def _generation_request(
        self,
        application: Application,
        question: str,
        result: common_pb2.RetrievalResult,
        context: context_service_pb2.ConversationContext,
    ) -> GenerationRequest:
        """The prompt (application template, history, evidence, what could not be verified)."""
        evidence = [EvidenceParagraph(p.id, p.document_name, p.title, p.content) for p in result.paragraphs]
        history = [ChatMessage(ROLE.name(m.role) or "user", m.content) for m in context.messages]
        stop_reason = STOP_REASON.name(result.stop_reason)
        setting = application.model_setting or {}
        messages = build_messages(
            question=question,
            evidence=evidence,
            history=history,
            sufficient=result.sufficient,
            stop_reason=stop_reason,
            missing=result.missing,
            prompt_template=str(setting.get("prompt", "")),
            system_prompt=str(setting.get("system", "")),
        )
        return GenerationRequest(
            messages=messages,
            question=question,
            problem_text=result.problem_text,
            evidence=evidence,
            sufficient=result.sufficient,
            stop_reason=stop_reason,
            missing=result.missing,
            support=part_support(result),
        )

    async def _save(self, record_id: int, outcome: Outcome, ending: Ending, run_time: float) -> BaseException | None:
        """The outcome into the record; None when saved, else why not (see ``save_outcome``)."""
        context = outcome.context.info if outcome.context is not None else None
        retrieval = outcome.retrieval or outcome.partial.result()
        model = outcome.model or self._model
        reasoning = "".join(outcome.reasoning)
        trace_id = question_trace_id()
        # The chat step's own time (the record's run_time is the whole answer's).
        started = outcome.generation_started
        generation = time.monotonic() - started if started is not None else 0.0
        details = record_details(
            retrieval, context, model.model_name, model.is_offline, generation, reasoning, trace_id
        )
        details.error_detail = ending.detail  # the cause, for the operator's log only
        values = {
            "answer": "".join(outcome.answer),
            "status": ending.status,
            "details": stored(details),
            "message_tokens": outcome.message_tokens,
            "answer_tokens": outcome.answer_tokens,
            "error": ending.error,
            "run_time": round(run_time, 3),
            **log_columns(details),
        }
        observe_ended(ending.status, retrieval)
        return await save_outcome(self._store, record_id, values)


@dataclass
class _Calls:
    """The question's upstream calls; whatever is still running is cancelled at the end."""

    context: ContextCall
    retrieve: RetrieveCall | None = None

    def cancel(self) -> None:
        for call in (self.context, self.retrieve):
            if call is not None:
                call.cancel()  # a no-op once it has finished


async def _deltas(
    first: asyncio.Future[str | ReasoningDelta] | None, deltas: AsyncIterator[str | ReasoningDelta]
) -> AsyncGenerator[list[str | ReasoningDelta], None]:
    """The model's non-empty deltas one at a time (batches of one), the first one already requested."""
    next_delta: Awaitable[str | ReasoningDelta] = first if first is not None else anext(deltas)
    while True:
        try:
            delta = await next_delta
        except StopAsyncIteration:
            return
        next_delta = anext(deltas)
        if has_text(delta):
            yield [delta]


def _delta_response(found: list[str | ReasoningDelta]) -> pb.AskResponse:
    """One model delta as ``delta``, as it always was; several that arrived together as ``deltas``."""
    answer = [
        pb.AnswerDelta(reasoning=d.text) if isinstance(d, ReasoningDelta) else pb.AnswerDelta(content=d) for d in found
    ]
    if len(answer) == 1:
        return pb.AskResponse(delta=answer[0])
    return pb.AskResponse(deltas=pb.AnswerDeltas(deltas=answer))


async def _close_stream(
    first: asyncio.Future[str | ReasoningDelta] | None, deltas: AsyncIterator[str | ReasoningDelta]
) -> None:
    """Stop the model stream, whether it ended, failed or is being abandoned."""
    if first is not None and not first.done():
        first.cancel()
        with contextlib.suppress(BaseException):
            await first
    with contextlib.suppress(Exception):
        await deltas.aclose()  # type: ignore[attr-defined]


def _done(record_id: int, outcome: Outcome, hide_sources: bool) -> pb.AskResponse:
    """The stream's last event; without its sources for a visitor the application hides them from."""
    result = outcome.retrieval
    return pb.AskResponse(
        done=pb.AskDone(
            record_id=str(record_id),
            message_tokens=outcome.message_tokens,
            answer_tokens=outcome.answer_tokens,
            stop_reason=result.stop_reason if result else common_pb2.STOP_REASON_UNSPECIFIED,
            sufficient=result.sufficient if result else False,
            sources=result.paragraphs if result and not hide_sources else [],
        )
    )


def observe_ended(status: str, retrieval: common_pb2.RetrievalResult | None) -> None:
    """Count the question once, by stop reason and status, from the result its record is saved
    with; its rounds and evidence when retrieval ran (a stopped question's partial rounds count:
    they ran)."""
    if retrieval is None:
        observe_question(status, "", None, None)
        return
    observe_question(status, STOP_REASON.name(retrieval.stop_reason), len(retrieval.rounds), len(retrieval.paragraphs))


def _new_question(chat_id: str, question: Question, holder: str) -> NewQuestion:
    """The record the question starts with, as either way of starting it takes it."""
    return NewQuestion(
        chat_id, question.text, holder, question.re_chat, question.source, question.origin, question.counted
    )


def _chosen_model(application: Application, slot: str) -> str:
    """The model endpoint the application chose for ``slot`` (chat, aux or rerank model id);
    empty means the deployment's (for rerank: none)."""
    return str((application.model_setting or {}).get(slot) or "")
