"""One question end to end (DESIGN §4): checks → lease → record → context → retrieval →
generation → record saved → done. Whatever happens, the record keeps what exists."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import grpc

from kb.chat.v1 import chat_service_pb2 as pb
from kb.common.v1 import common_pb2
from kb.context.v1 import context_service_pb2, context_service_pb2_grpc
from kb.retrieval.v1 import retrieval_service_pb2, retrieval_service_pb2_grpc
from kbcore.db.lease import ChatBusy, LeaseStore, new_holder
from kbcore.db.models import Application, RecordStatus
from kbcore.models.base import ChatMessage, EvidenceParagraph, GenerationRequest, ModelClient, ModelError
from kbcore.rpc import ROLE_NAMES, STOP_REASON_NAMES, RpcError, paragraph_json, round_json
from kbcore.settings import Settings
from kbcore.tokens import count_tokens
from services.chat.convert import application_message
from services.chat.prompt import build_messages
from services.chat.running import RunningQuestions
from services.chat.store import ChatStore, StartedQuestion

log = logging.getLogger(__name__)
STOP_POLL_SECONDS = 1.0
ContextCall: TypeAlias = (
    "grpc.aio.UnaryStreamCall[context_service_pb2.LoadContextRequest, context_service_pb2.LoadContextResponse]"
)
RetrieveCall: TypeAlias = (
    "grpc.aio.UnaryStreamCall[retrieval_service_pb2.RetrieveRequest, retrieval_service_pb2.RetrieveResponse]"
)


@dataclass
class Upstreams:
    context: context_service_pb2_grpc.ContextServiceStub
    retrieval: retrieval_service_pb2_grpc.RetrievalServiceStub


@dataclass
class Outcome:
    """What exists so far; saved with the record whatever the ending."""

    answer: list[str] = field(default_factory=list)
    context: context_service_pb2.ConversationContext | None = None
    retrieval: retrieval_service_pb2.RetrieveResult | None = None
    message_tokens: int = 0
    answer_tokens: int = 0


def search_settings(application: Application) -> common_pb2.SearchSettings:
    return application_message(application).search


def details(outcome: Outcome, model: ModelClient, run_time: float) -> dict[str, Any]:
    """The record's details: search step, context info and chat step, all from one source."""
    result = outcome.retrieval
    rounds = list(result.rounds) if result is not None else []
    info = outcome.context.info if outcome.context is not None else None
    return {
        "problem_text": result.problem_text if result else "",
        "agent_trace": [round_json(r) for r in rounds],
        "agent_stop_reason": STOP_REASON_NAMES.get(result.stop_reason, "") if result else "",
        "sufficient": result.sufficient if result else False,
        "missing": result.missing if result else "",
        "rewrite_error": result.rewrite_error if result else "",
        "paragraph_list": [paragraph_json(p) for p in (result.paragraphs if result else [])],
        "context_info": {
            "enabled": info.enabled,
            "recent_rounds": info.recent_rounds,
            "compacted_rounds": info.compacted_rounds,
            "revision": info.revision,
            "token_budget": info.token_budget,
            "estimated_tokens": info.estimated_tokens,
        }
        if info is not None
        else {},
        "search_step": {"step_type": "iterative_search", "run_time": round(result.run_time, 3) if result else 0.0},
        "chat_step": {
            "model": model.model_name,
            "offline_model": model.is_offline,
            "message_tokens": outcome.message_tokens,
            "answer_tokens": outcome.answer_tokens,
            "run_time": round(run_time, 3),
        },
    }


class AskFlow:
    def __init__(
        self,
        settings: Settings,
        store: ChatStore,
        leases: LeaseStore,
        upstreams: Upstreams,
        model: ModelClient,
        running: RunningQuestions,
    ) -> None:
        self._settings = settings
        self._store = store
        self._leases = leases
        self._up = upstreams
        self._model = model
        self._running = running

    async def run(
        self,
        application: Application,
        chat_id: str,
        question: str,
        re_chat: bool,
        admit: Callable[[], Awaitable[None]] | None = None,
    ) -> AsyncIterator[pb.AskResponse]:
        """``admit`` runs once the chat is held and before the record exists (the quota check)."""
        holder = new_holder("ask")
        started = await self._begin(chat_id, question, holder, re_chat, admit)
        # Nothing awaits between taking the lease and entering ``held``, which releases it.
        async with self._leases.held(chat_id, holder) as lease_lost:
            stop_requested = self._running.register(chat_id)
            watcher = asyncio.create_task(self._watch_for_stop(chat_id, holder, stop_requested, lease_lost))
            try:
                async for event in self._answer(application, chat_id, question, started, stop_requested):
                    yield event
            finally:
                watcher.cancel()
                self._running.unregister(chat_id, stop_requested)

    async def _begin(
        self,
        chat_id: str,
        question: str,
        holder: str,
        re_chat: bool,
        admit: Callable[[], Awaitable[None]] | None,
    ) -> StartedQuestion:
        """The chat's lease and the question's record: one transaction, unless a quota check
        has to run between the two (it must not count a question refused as busy)."""
        try:
            if admit is None:
                return await self._store.begin_question(self._leases, chat_id, question, holder, re_chat)
            if not await self._leases.try_acquire(chat_id, holder, "question"):
                raise ChatBusy(chat_id)
        except ChatBusy as exc:
            raise RpcError(
                grpc.StatusCode.ABORTED, "this chat is already answering a question; wait for it to finish or stop it"
            ) from exc
        try:
            await admit()
            return await self._store.record_question(chat_id, question, holder, re_chat)
        except BaseException:
            await asyncio.shield(self._leases.release(chat_id, holder))
            raise

    async def _watch_for_stop(
        self, chat_id: str, holder: str, stop_requested: asyncio.Event, lease_lost: asyncio.Event
    ) -> None:
        """A Stop that reached another chat-service process arrives through the lease row; a
        lost lease stops the answer too, since another holder may own the chat now."""
        while not stop_requested.is_set():
            await asyncio.sleep(STOP_POLL_SECONDS)
            try:
                if lease_lost.is_set() or await self._leases.stop_requested(chat_id, holder):
                    stop_requested.set()
            except Exception:  # a database hiccup must not end the answer; the next poll retries
                log.exception("checking for a stop request on chat %s failed", chat_id)

    async def _answer(
        self,
        application: Application,
        chat_id: str,
        question: str,
        question_started: StartedQuestion,
        stop_requested: asyncio.Event,
    ) -> AsyncIterator[pb.AskResponse]:
        started = time.monotonic()
        record = question_started.record
        holder = record.holder
        # The upstream calls go out before the first event: sending an event waits for the send
        # to complete. The first question of a chat has no history, so it is searched as asked:
        # retrieval runs while the context loads; its events follow the context's.
        context_call = self._start_context(application, chat_id, record.id, holder)
        early = self._start_retrieve(application, question, []) if question_started.first_in_chat else None
        later: RetrieveCall | None = None
        try:
            yield pb.AskResponse(started=pb.RecordStarted(record_id=str(record.id), chat_id=chat_id))
            # The context phase starts now: said here, not after a round trip to the context service.
            yield pb.AskResponse(progress=common_pb2.Progress(phase=common_pb2.PHASE_CONTEXT))
            outcome = Outcome()
            status, error = RecordStatus.ANSWERED, ""
            try:
                async for event in self._load_context(context_call, outcome):
                    yield event
                if early is None:
                    history = list(outcome.context.messages) if outcome.context else []
                    later = self._start_retrieve(application, question, history)
                async for event in self._retrieve(early or later, outcome):
                    yield event
                async for event in self._generate(application, question, outcome, stop_requested):
                    yield event
                if stop_requested.is_set():
                    status, error = RecordStatus.STOPPED, "stopped by the user"
            except asyncio.CancelledError:
                status, error = RecordStatus.STOPPED, "the client went away before the answer ended"
                raise
            except RpcError as exc:
                status, error = RecordStatus.FAILED, exc.message
                raise
            except ModelError as exc:
                status, error = RecordStatus.FAILED, f"the model failed: {exc}"
                raise RpcError(grpc.StatusCode.UNAVAILABLE, error) from exc
            except grpc.aio.AioRpcError as exc:
                status, error = RecordStatus.FAILED, f"an upstream service failed: {exc.details()}"
                raise RpcError(_upstream_code(exc), error) from exc
            except Exception as exc:
                log.exception("question on chat %s failed", chat_id)
                status, error = RecordStatus.FAILED, f"internal error: {type(exc).__name__}"
                raise RpcError(grpc.StatusCode.INTERNAL, error) from exc
            finally:
                # Saved before `done` is sent (and even when the caller has gone), so a follow-up
                # asked the moment the stream ends always sees this answer.
                await asyncio.shield(
                    self._save(record.id, question, outcome, status, error, time.monotonic() - started)
                )
            yield pb.AskResponse(
                done=pb.AskDone(
                    record_id=str(record.id),
                    message_tokens=outcome.message_tokens,
                    answer_tokens=outcome.answer_tokens,
                    stop_reason=outcome.retrieval.stop_reason
                    if outcome.retrieval
                    else common_pb2.STOP_REASON_UNSPECIFIED,
                    sufficient=outcome.retrieval.sufficient if outcome.retrieval else False,
                )
            )
        finally:
            for call in (context_call, early, later):
                if call is not None:
                    call.cancel()  # a no-op once it has finished

    def _start_context(self, application: Application, chat_id: str, record_id: int, holder: str) -> ContextCall:
        """The LoadContext call, sent now; its responses wait in the channel until read."""
        request = context_service_pb2.LoadContextRequest(
            chat_id=chat_id,
            before_record_id=record_id,
            dialogue_number=application.dialogue_number,
            lease_holder=holder,
        )
        return self._up.context.LoadContext(request, timeout=self._settings.ask_timeout)

    async def _load_context(self, call: ContextCall, outcome: Outcome) -> AsyncIterator[pb.AskResponse]:
        async for response in call:
            if response.HasField("progress"):
                if response.progress.phase != common_pb2.PHASE_CONTEXT:  # already announced
                    yield pb.AskResponse(progress=response.progress)
            else:
                outcome.context = response.context

    def _start_retrieve(
        self, application: Application, question: str, history: list[common_pb2.Message]
    ) -> RetrieveCall:
        """The Retrieve call, sent now; its responses wait in the channel until read."""
        request = retrieval_service_pb2.RetrieveRequest(
            dataset_ids=list(application.dataset_ids or []),
            search=search_settings(application),
            question=question,
            history=history,
        )
        return self._up.retrieval.Retrieve(request, timeout=self._settings.ask_timeout)

    async def _retrieve(self, call: RetrieveCall, outcome: Outcome) -> AsyncIterator[pb.AskResponse]:
        async for response in call:
            if response.HasField("progress"):
                yield pb.AskResponse(progress=response.progress)
            else:
                outcome.retrieval = response.result

    async def _generate(
        self, application: Application, question: str, outcome: Outcome, stop_requested: asyncio.Event
    ) -> AsyncIterator[pb.AskResponse]:
        result = outcome.retrieval
        assert result is not None and outcome.context is not None
        evidence = [EvidenceParagraph(p.id, p.document_name, p.title, p.content) for p in result.paragraphs]
        history = [ChatMessage(ROLE_NAMES.get(m.role, "user"), m.content) for m in outcome.context.messages]
        stop_reason = STOP_REASON_NAMES.get(result.stop_reason, "")
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
        stream = self._model.generate(
            GenerationRequest(
                messages=messages,
                question=question,
                problem_text=result.problem_text,
                evidence=evidence,
                sufficient=result.sufficient,
                stop_reason=stop_reason,
                missing=result.missing,
            )
        )
        deltas = stream.deltas
        # The request goes out now, while the progress event below is being sent.
        first: asyncio.Future[str] = asyncio.ensure_future(anext(deltas))
        try:
            yield pb.AskResponse(
                progress=common_pb2.Progress(
                    phase=common_pb2.PHASE_GENERATING, rounds=len(result.rounds), stop_reason=result.stop_reason
                )
            )
            next_delta: Awaitable[str] = first
            while True:
                try:
                    delta = await next_delta
                except StopAsyncIteration:
                    break
                next_delta = anext(deltas)
                if not delta:
                    continue
                outcome.answer.append(delta)
                yield pb.AskResponse(delta=pb.AnswerDelta(content=delta))
                if stop_requested.is_set():
                    break
        finally:
            if not first.done():
                first.cancel()
                with contextlib.suppress(BaseException):
                    await first
            with contextlib.suppress(Exception):
                await deltas.aclose()  # type: ignore[attr-defined]
            outcome.message_tokens = stream.usage.prompt_tokens or sum(count_tokens(m.content) for m in messages)
            outcome.answer_tokens = stream.usage.completion_tokens or count_tokens("".join(outcome.answer))

    async def _save(
        self, record_id: int, question: str, outcome: Outcome, status: RecordStatus, error: str, run_time: float
    ) -> None:
        try:
            saved = await self._store.finish_record(
                record_id,
                answer="".join(outcome.answer),
                status=status.value,
                problem_text=outcome.retrieval.problem_text if outcome.retrieval else question,
                details=details(outcome, self._model, run_time),
                message_tokens=outcome.message_tokens,
                answer_tokens=outcome.answer_tokens,
                error=error,
                run_time=round(run_time, 3),
            )
            if not saved:
                log.warning("record %s was taken over by another holder; its outcome is not saved", record_id)
        except Exception:
            log.exception("could not save record %s", record_id)


def _upstream_code(error: grpc.aio.AioRpcError) -> grpc.StatusCode:
    """Client mistakes and corrupted data keep their code; anything else is the service being unavailable."""
    if error.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.DATA_LOSS):
        return error.code()
    if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.UNAVAILABLE
