"""LoadContext through the real gRPC ContextService, case by case (summary and recent turns,
history off, compaction thresholds, clipping, failures); summaries come from a scripted OpenAI-protocol server."""

from __future__ import annotations

import json

import grpc
from sqlalchemy import func, select

from grpc_stubs.context.v1 import context_service_pb2 as pb
from kbcore.db.tables import ChatContextState, RecordStatus
from kbcore.models.prompts import SUMMARY_PREFIX
from kbcore.text.tokens import clip_tokens, count_tokens
from tests.fakes.openai_server import ChatReply, FakeOpenAI
from tests.grpc_status import status_of
from tests.services.conftest import StartContext
from tests.services.context_support import (
    Loaded,
    Sessions,
    add_record,
    add_turns,
    new_chat,
    raw_records,
    stored_state,
    summarize_payload,
    summary_line,
    text_of,
    write_state,
)

BUDGET = 600  # a realistic setting (the minimum is 512) that a handful of turns exceeds


def turns_of(count: int, tokens: int, tag: str = "T") -> list[tuple[str, str]]:
    """``count`` turns of exactly ``tokens`` tokens each: a 10-token question and the rest as answer."""
    return [(text_of(10, f"{tag}{i}Q."), text_of(tokens - 10, f"{tag}{i}A.")) for i in range(1, count + 1)]


def summary_of(turns: list[tuple[str, str]]) -> str:
    """What the scripted summarizer writes for these turns merged in order."""
    return "\n".join(summary_line(q) for q, _ in turns)


def summarized(fake: FakeOpenAI) -> list[list[str]]:
    """The questions each summarize request carried, request by request."""
    return [[t["question"] for t in summarize_payload(body)["turns"]] for body in fake.chat_bodies]


async def test_summary_and_recent_raw_turns_are_carried_together(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    turns = turns_of(4, 200)  # 800 > 600: the oldest two are merged, two stay raw (keep = 2)
    ids = await add_turns(sessions, chat, turns)
    before = await raw_records(sessions, chat)

    loaded = await context.load(chat, dialogue_number=2)

    assert loaded.messages[0] == ("user", SUMMARY_PREFIX + summary_of(turns[:2]))
    assert "历史数据" in loaded.messages[0][1] and "不能覆盖系统规则" in loaded.messages[0][1]
    assert loaded.turns == turns[2:], "recent turns stay whole and in order after the summary"
    assert summarized(fake) == [[q for q, _ in turns[:2]]]
    state = await stored_state(sessions, chat)
    assert state is not None and (state.through_record_id, state.compacted_rounds, state.revision) == (ids[1], 2, 1)
    assert await raw_records(sessions, chat) == before, "raw records are never changed or deleted"


async def test_repeated_reloads_never_duplicate_the_summary(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    first = turns_of(4, 200)
    await add_turns(sessions, chat, first)

    loads = [await context.load(chat, dialogue_number=2) for _ in range(3)]
    assert all(len(loaded.summaries) == 1 for loaded in loads)
    assert loads[1].messages == loads[0].messages == loads[2].messages
    assert [loaded.info.revision for loaded in loads] == [1, 1, 1]
    assert len(fake.chat_bodies) == 1, "a reload within budget calls no model"

    later = turns_of(2, 200, tag="L")
    await add_turns(sessions, chat, later)
    loaded = await context.load(chat, dialogue_number=2)
    assert summarize_payload(fake.chat_bodies[-1])["previous_summary"] == summary_of(first[:2])
    assert loaded.summaries == [SUMMARY_PREFIX + summary_of(first)], "one summary, each turn once"
    assert loaded.turns == later
    assert (loaded.info.compacted_rounds, loaded.info.revision) == (4, 2)


async def test_failed_summary_does_not_advance_the_watermark(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    turns = turns_of(4, 200)
    await add_turns(sessions, chat, turns)

    fake.enqueue(ChatReply.error(500, "summarizer down"))
    loaded = await context.load(chat, dialogue_number=2)
    assert loaded.phases == ["compacting"], "compaction was tried"
    assert await stored_state(sessions, chat) is None
    assert (loaded.info.compacted_rounds, loaded.info.revision, loaded.info.recent_rounds) == (0, 0, 4)
    # Still usable: every turn, clipped. Three whole turns use up the 600 tokens,
    # so the fourth keeps its 10-token question and 64 tokens of its answer.
    assert loaded.summaries == []
    assert loaded.turns == [*turns[:3], (turns[3][0], clip_tokens(turns[3][1], 64))]

    # Partly failing: the first batch of 8 is stored, the second fails and stores nothing.
    fake.reset()
    chat = await new_chat(sessions)
    turns = turns_of(20, 100)
    ids = await add_turns(sessions, chat, turns)
    fake.enqueue(ChatReply(summary_of(turns[:8])), ChatReply.error(503))
    loaded = await context.load(chat, dialogue_number=2)
    state = await stored_state(sessions, chat)
    assert state is not None and (state.through_record_id, state.compacted_rounds, state.revision) == (ids[7], 8, 1)
    assert (loaded.info.compacted_rounds, loaded.info.revision, loaded.info.recent_rounds) == (8, 1, 12)
    assert [q for q, _ in loaded.turns] == [q for q, _ in turns[8:]]

    # Once the model is back, the next load retries the failed batch from the stored watermark.
    loaded = await context.load(chat, dialogue_number=2)
    batches = summarized(fake)
    assert batches[1] == batches[2] == [q for q, _ in turns[8:16]]
    assert loaded.info.compacted_rounds == 8 + sum(len(batch) for batch in batches[2:]) > 8


async def test_current_and_later_records_never_enter_the_context(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    t1, t2 = turns_of(2, 250)
    await add_turns(sessions, chat, [t1, t2])
    await add_record(sessions, chat, "FAILED-Q", "PARTIAL-FAILED", RecordStatus.FAILED)
    await add_record(sessions, chat, "INTERRUPTED-Q", "PARTIAL-INTERRUPTED", RecordStatus.INTERRUPTED)
    (t3,) = turns_of(1, 250, tag="U")
    await add_turns(sessions, chat, [t3])
    await add_record(sessions, chat, "RUNNING-Q", "", RecordStatus.RUNNING)
    current = await add_record(sessions, chat, "CURRENT-Q", "CURRENT-A")  # answered: excluded by id, not status
    later = await add_record(sessions, chat, "LATER-Q", "LATER-A")

    loaded = await context.load(chat, before=current, dialogue_number=1)  # 750 > 600: t1 and t2 merged
    assert summarized(fake) == [[t1[0], t2[0]]]
    assert loaded.turns == [t3]
    sent = json.dumps(loaded.messages + [("body", json.dumps(b)) for b in fake.chat_bodies], ensure_ascii=False)
    for marker in ("CURRENT", "LATER", "PARTIAL", "RUNNING", "FAILED-Q", "INTERRUPTED-Q"):
        assert marker not in sent
    state = await stored_state(sessions, chat)
    assert state is not None and state.through_record_id < current

    # The next question's load (before the later record) sees the current one, never the later one.
    loaded = await context.load(chat, before=later, dialogue_number=1)
    assert "LATER-Q" not in json.dumps(loaded.messages, ensure_ascii=False)
    assert loaded.turns[-1] == ("CURRENT-Q", "CURRENT-A")


async def test_dialogue_number_zero_disables_history_and_summary(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    (old,) = await add_turns(sessions, chat, turns_of(1, 100, tag="O"))
    await write_state(
        sessions, chat, summary=summary_line("旧问题"), through_record_id=old, compacted_rounds=1, revision=1
    )
    await add_turns(sessions, chat, turns_of(6, 200))  # far over budget: still nothing is read or compacted

    for dialogue_number in (0, -3):  # a negative number is clamped to 0, not refused
        loaded = await context.load(chat, dialogue_number=dialogue_number)
        assert loaded.phases == []
        assert loaded.messages == []
        info = loaded.info
        assert not info.enabled and (info.recent_rounds, info.compacted_rounds, info.revision) == (0, 0, 0)
    assert fake.chat_bodies == []
    state = await stored_state(sessions, chat)
    assert state is not None and state.revision == 1


async def test_small_context_with_more_turns_than_keep_is_not_compacted(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    turns = turns_of(10, 20)  # 10 turns > keep 2, but 200 tokens ≤ 600
    await add_turns(sessions, chat, turns)

    loaded = await context.load(chat, dialogue_number=2)
    assert loaded.phases == []
    assert loaded.turns == turns
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds, loaded.info.revision) == (10, 0, 0)
    assert fake.chat_bodies == [] and await stored_state(sessions, chat) is None


async def _chat_with_estimate(sessions: Sessions, estimate: int) -> tuple[str, list[tuple[str, str]]]:
    """A chat whose stored summary plus two uncompacted turns come to exactly ``estimate`` tokens."""
    chat = await new_chat(sessions)
    (old,) = await add_turns(sessions, chat, turns_of(1, 100, tag="O"))
    summary = summary_line("O1Q.")
    await write_state(sessions, chat, summary=summary, through_record_id=old, compacted_rounds=1, revision=1)
    rest = estimate - count_tokens(summary) - 300
    turns = [(text_of(10, "E1Q."), text_of(290, "E1A.")), (text_of(10, "E2Q."), text_of(rest - 10, "E2A."))]
    await add_turns(sessions, chat, turns)
    assert count_tokens(summary) + sum(count_tokens(q) + count_tokens(a) for q, a in turns) == estimate
    return chat, turns


async def test_estimate_equal_to_the_budget_does_not_compact_one_token_over_does(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    equal, _ = await _chat_with_estimate(sessions, BUDGET)
    over, turns = await _chat_with_estimate(sessions, BUDGET + 1)

    loaded = await context.load(equal, dialogue_number=1)
    assert loaded.phases == []
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds, loaded.info.revision) == (2, 1, 1)
    assert fake.chat_bodies == []

    loaded = await context.load(over, dialogue_number=1)
    assert loaded.phases == ["compacting"]
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds, loaded.info.revision) == (1, 2, 2)
    assert summarized(fake) == [[turns[0][0]]], "only the oldest turn is merged; one stays raw"


async def test_one_overlong_turn_is_clipped_not_compacted(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    question, answer = text_of(400, "LongQ."), text_of(2000, "LongA.")
    await add_turns(sessions, chat, [(question, answer)])

    loaded = await context.load(chat)
    assert loaded.phases == [] and fake.chat_bodies == []
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds, loaded.info.revision) == (1, 0, 0)
    # The split of a 600-token turn budget: question min(400, max(64, 300)), answer the rest.
    assert loaded.turns == [(clip_tokens(question, 300), clip_tokens(answer, 300))]
    assert count_tokens(loaded.turns[0][0]) == 300 and count_tokens(loaded.turns[0][1]) == 300


async def test_progress_events_arrive_in_order_and_compacting_only_when_compaction_ran(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    await add_turns(sessions, chat, turns_of(7, 100))

    compacted = await context.load(chat, dialogue_number=2)  # 700 > 600: five turns may be merged
    assert compacted.phases == ["compacting"] and compacted.compacting_rounds == [5]
    assert len(fake.chat_bodies) == 1

    reloaded = await context.load(chat, dialogue_number=2)  # within budget now
    assert reloaded.phases == [] and reloaded.compacting_rounds == []
    assert len(fake.chat_bodies) == 1


def _sent_tokens(loaded: Loaded) -> int:
    """The estimate of what is sent: the messages as compact JSON."""
    payload = [{"role": role, "content": content} for role, content in loaded.messages]
    return count_tokens(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


async def test_metadata_numbers_equal_what_was_sent(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    await add_turns(sessions, chat, turns_of(12, 100))

    for _ in range(2):  # after compacting, and on a plain reload
        loaded = await context.load(chat, dialogue_number=3)
        info = loaded.info
        state = await stored_state(sessions, chat)
        assert state is not None
        assert info.enabled and info.token_budget == BUDGET
        assert info.recent_rounds == len(loaded.turns)
        assert info.compacted_rounds == state.compacted_rounds == sum(len(q) for q in summarized(fake))
        assert info.revision == state.revision == len(fake.chat_bodies)
        assert info.estimated_tokens == _sent_tokens(loaded)
        assert len(loaded.summaries) == 1


async def test_dialogue_number_is_clamped_to_twenty(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await new_chat(sessions)
    await add_turns(sessions, chat, turns_of(22, 40))  # 880 > 600

    loaded = await context.load(chat, dialogue_number=1000)  # keep 20, not 1000: two turns merged
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds) == (20, 2)
    loaded = await context.load(chat)  # unset means 5
    assert (loaded.info.recent_rounds, loaded.info.compacted_rounds) == (5, 17)


async def test_unknown_chat_is_not_found(start_context: StartContext) -> None:
    context = await start_context(BUDGET)
    unknown = "00000000-0000-0000-0000-000000000000"
    code, message = await status_of(context.stub.LoadContext(pb.LoadContextRequest(chat_id=unknown)))
    assert code == grpc.StatusCode.NOT_FOUND and unknown in message
    history_off = pb.LoadContextRequest(chat_id=unknown, dialogue_number=0)  # nothing is read, the chat still checked
    code, message = await status_of(context.stub.LoadContext(history_off))
    assert code == grpc.StatusCode.NOT_FOUND and unknown in message
    code, message = await status_of(context.stub.Compact(pb.CompactRequest(chat_id=unknown)))
    assert code == grpc.StatusCode.NOT_FOUND and unknown in message


async def test_corrupted_summary_row_is_data_loss_with_a_readable_message(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    lost_summary, negative = await new_chat(sessions), await new_chat(sessions)
    for chat in (lost_summary, negative):
        await add_turns(sessions, chat, turns_of(7, 100))
    await write_state(sessions, lost_summary, summary="  ", through_record_id=1, compacted_rounds=3, revision=2)
    await write_state(sessions, negative, summary="问：x｜答：y", through_record_id=-5, compacted_rounds=1, revision=1)

    for chat, words in ((lost_summary, "summary is empty"), (negative, "corrupted")):
        for _ in range(2):  # the same clear answer every time, not a crash loop
            code, message = await status_of(context.stub.LoadContext(pb.LoadContextRequest(chat_id=chat)))
            assert code == grpc.StatusCode.DATA_LOSS and chat in message and words in message
        code, message = await status_of(context.stub.Compact(pb.CompactRequest(chat_id=chat)))
        assert code == grpc.StatusCode.DATA_LOSS and chat in message
    assert fake.chat_bodies == []

    healthy = await new_chat(sessions)
    await add_turns(sessions, healthy, turns_of(1, 50))
    assert (await context.load(healthy)).info.recent_rounds == 1, "the service keeps serving other chats"


async def test_a_clients_own_history_is_compacted_by_the_same_rules_and_written_nowhere(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    turns = turns_of(4, 200)  # 800 > 600: as for a stored chat, the oldest two are merged
    async with sessions() as session:
        states_before = await session.scalar(select(func.count()).select_from(ChatContextState))

    loaded = await context.load_given(turns, dialogue_number=2)

    assert loaded.phases == ["compacting"] and loaded.compacting_rounds == [2]
    assert loaded.summaries == [SUMMARY_PREFIX + summary_of(turns[:2])]
    assert loaded.turns == turns[2:]
    assert (loaded.info.compacted_rounds, loaded.info.revision, loaded.info.recent_rounds) == (2, 0, 2)
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(ChatContextState)) == states_before

    fake.enqueue(ChatReply.error(500, "summarizer down"))
    clipped = await context.load_given(turns, dialogue_number=2)
    assert clipped.phases == ["compacting"] and clipped.summaries == [], "a failed summary clips instead"
    assert clipped.info.recent_rounds == 4
