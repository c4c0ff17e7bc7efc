"""Helpers for the context tests: rows written straight into the database, texts of an exact
token size, a scripted summarizer, and a thin client for the real gRPC ContextService."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.context.v1 import context_service_pb2 as pb
from grpc_stubs.context.v1 import context_service_pb2_grpc as pb_grpc
from kbcore.db.tables import Application, Chat, ChatContextState, ChatRecord, RecordStatus
from kbcore.models.prompts import SUMMARY_ANSWER, SUMMARY_MARKER, SUMMARY_QUESTION
from kbcore.text.tokens import count_tokens
from kbcore.vocabulary import ROLE
from tests.fakes.openai_server import ChatReply, request_kind

Sessions = async_sessionmaker[AsyncSession]


def text_of(tokens: int, label: str) -> str:
    """A text of exactly ``tokens`` tokens that starts with ``label`` (so turns stay distinguishable)."""
    text = label + " x" * (tokens - count_tokens(label))
    assert count_tokens(text) == tokens, (label, tokens)
    return text


# --- the database ------------------------------------------------------------------------


async def new_chat(sessions: Sessions, dialogue_number: int = 5, dataset_ids: Sequence[str] = ()) -> str:
    async with sessions.begin() as session:
        application = Application(name="context test", dataset_ids=list(dataset_ids), dialogue_number=dialogue_number)
        session.add(application)
        await session.flush()
        chat = Chat(application_id=application.id)
        session.add(chat)
        await session.flush()
        return chat.id


async def add_record(
    sessions: Sessions, chat_id: str, question: str, answer: str, status: str = RecordStatus.ANSWERED
) -> int:
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=chat_id, question=question, answer=answer, status=status)
        session.add(record)
        await session.flush()
        return record.id


async def add_turns(sessions: Sessions, chat_id: str, turns: Sequence[tuple[str, str]]) -> list[int]:
    """Answered records, one transaction each, so their ids follow the order given."""
    return [await add_record(sessions, chat_id, q, a) for q, a in turns]


async def stored_state(sessions: Sessions, chat_id: str) -> ChatContextState | None:
    async with sessions() as session:
        return await session.get(ChatContextState, chat_id)


async def write_state(sessions: Sessions, chat_id: str, **values: Any) -> None:
    async with sessions.begin() as session:
        state = await session.get(ChatContextState, chat_id)
        if state is None:
            session.add(ChatContextState(chat_id=chat_id, **values))
        else:
            for name, value in values.items():
                setattr(state, name, value)


async def raw_records(sessions: Sessions, chat_id: str) -> list[tuple[int, str, str, str]]:
    async with sessions() as session:
        rows = await session.execute(
            select(ChatRecord.id, ChatRecord.question, ChatRecord.answer, ChatRecord.status)
            .where(ChatRecord.chat_id == chat_id)
            .order_by(ChatRecord.id)
        )
        return [tuple(row) for row in rows.all()]  # type: ignore[misc]


# --- the scripted summarizer ---------------------------------------------------------------


def summarize_payload(body: dict[str, Any]) -> dict[str, Any]:
    """What a summarize request carried: ``previous_summary`` and ``turns`` [{question, answer}]."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(user)  # type: ignore[no-any-return]


def summary_line(question: str) -> str:
    return f"{SUMMARY_QUESTION}{question}{SUMMARY_ANSWER}ok"


def summarizer(body: dict[str, Any]) -> ChatReply:
    """The previous summary's lines, then one short line per merged question, as the prompt asks."""
    assert request_kind(body) == "summarize", "the context service only ever asks for summaries"
    payload = summarize_payload(body)
    lines = [line for line in payload["previous_summary"].splitlines() if line]
    lines += [summary_line(turn["question"]) for turn in payload["turns"]]
    return ChatReply("\n".join(lines))


# --- the gRPC client --------------------------------------------------------------------


@dataclass
class Loaded:
    """One LoadContext call as a client saw it."""

    phases: list[str]
    compacting_rounds: list[int]
    messages: list[tuple[str, str]]  # (role, content)
    info: common_pb2.ContextInfo

    @property
    def summaries(self) -> list[str]:
        return [content for role, content in self.messages if content.startswith(SUMMARY_MARKER)]

    @property
    def turns(self) -> list[tuple[str, str]]:
        """(question, answer) pairs after the summary."""
        rest = [m for m in self.messages if not m[1].startswith(SUMMARY_MARKER)]
        assert [role for role, _ in rest] == ["user", "assistant"] * (len(rest) // 2), rest
        return [(rest[i][1], rest[i + 1][1]) for i in range(0, len(rest), 2)]


class ContextClient:
    def __init__(self, channel: grpc.aio.Channel, budget: int) -> None:
        self.stub = pb_grpc.ContextServiceStub(channel)
        self.budget = budget

    async def load(
        self, chat_id: str, before: int = 0, dialogue_number: int | None = None, lease_holder: str = ""
    ) -> Loaded:
        request = pb.LoadContextRequest(chat_id=chat_id, before_record_id=before, lease_holder=lease_holder)
        return await self._load(request, dialogue_number)

    async def load_given(self, turns: Sequence[tuple[str, str]], dialogue_number: int | None = None) -> Loaded:
        """LoadContext over turns the client holds (no chat): the OpenAI protocol's history."""
        request = pb.LoadContextRequest()
        for question, answer in turns:
            request.client_turns.messages.add(role=common_pb2.ROLE_USER, content=question)
            request.client_turns.messages.add(role=common_pb2.ROLE_ASSISTANT, content=answer)
        return await self._load(request, dialogue_number)

    async def _load(self, request: pb.LoadContextRequest, dialogue_number: int | None) -> Loaded:
        if dialogue_number is not None:
            request.dialogue_number = dialogue_number
        responses = [r async for r in self.stub.LoadContext(request, timeout=30)]
        *progress, last = responses
        assert all(r.HasField("progress") for r in progress), "progress events come before the context"
        assert last.HasField("context"), "the stream ends with the context"
        return Loaded(
            phases=[str(r.progress.WhichOneof("phase")) for r in progress],
            compacting_rounds=[r.progress.compacting.rounds for r in progress if r.progress.HasField("compacting")],
            messages=[(ROLE.name(m.role), m.content) for m in last.context.messages],
            info=last.context.info,
        )

    async def compact(self, chat_id: str, dialogue_number: int | None = None) -> pb.CompactResponse:
        request = pb.CompactRequest(chat_id=chat_id)
        if dialogue_number is not None:
            request.dialogue_number = dialogue_number
        reply: pb.CompactResponse = await self.stub.Compact(request, timeout=30)
        return reply
