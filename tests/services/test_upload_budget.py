"""The deployment's budget for uploads in flight, on the suite's real SQL (SQLite, and
PostgreSQL in its pass): concurrent holders never take more than the budget or one caller's
share, a refusal is ``Busy`` with its sentence and the seconds to wait, a share comes back however
its holder ends (a cancelled request included), and a share a dead process left stops counting
at its expiry."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_write
from kbcore.db.tables import UploadReservation, utcnow
from kbcore.errors import Busy
from kbcore.process.disk_space import MiB
from services.retrieval.ingestion.jobs.upload_budget import (
    CALLER_UPLOADS_FULL,
    RETRY_SECONDS,
    UPLOADS_FULL,
    Shares,
    UploadBudget,
)

HOLD = 30.0  # seconds a share may be held (the request's deadline)


@pytest.fixture
async def budget(sessions: async_sessionmaker[AsyncSession]) -> UploadBudget:
    await run_write(sessions, lambda s: s.execute(delete(UploadReservation)))
    return UploadBudget(sessions, Shares.of_mib(64, 32))


async def test_concurrent_uploads_never_hold_more_than_the_budget_and_the_rest_are_told_to_retry(
    budget: UploadBudget, unique: str
) -> None:
    holding, most = 0, 0
    answers: list[str] = []

    async def upload(caller: str) -> None:
        nonlocal holding, most
        try:
            async with budget.held(caller, 10 * MiB, HOLD):
                holding += 1
                most = max(most, holding)
                assert await budget.in_flight() <= 64 * MiB
                await asyncio.sleep(0.3)
                holding -= 1
                answers.append("held")
        except Busy as refused:
            assert refused.retry_after == RETRY_SECONDS
            answers.append(str(refused))

    # Twenty uploaders, two uploads each: the budget holds six of 10 MiB, each caller three.
    await asyncio.gather(*(upload(f"user:{unique}-{i % 10}") for i in range(20)))
    assert most == 6, most
    assert answers.count("held") >= 6 and set(answers) <= {"held", str(UPLOADS_FULL)}, answers
    assert str(UPLOADS_FULL) in answers
    assert await budget.in_flight() == 0


async def test_one_caller_holds_at_most_its_share_while_another_is_let_in(budget: UploadBudget, unique: str) -> None:
    async with budget.held(f"user:{unique}-a", 20 * MiB, HOLD), budget.held(f"user:{unique}-a", 12 * MiB, HOLD):
        with pytest.raises(Busy) as refused:
            async with budget.held(f"user:{unique}-a", 1, HOLD):
                pytest.fail("a caller past its share was let in")
        assert str(refused.value) == str(CALLER_UPLOADS_FULL)
        async with budget.held(f"user:{unique}-b", 20 * MiB, HOLD) as held:
            assert held == 20 * MiB
            assert await budget.in_flight() == 52 * MiB
    assert await budget.in_flight() == 0


async def test_an_upload_larger_than_a_share_fits_when_its_caller_holds_nothing(
    budget: UploadBudget, unique: str
) -> None:
    async with budget.held(f"user:{unique}", 50 * MiB, HOLD) as held:
        assert held == 32 * MiB  # what one caller may hold, the whole of it
        with pytest.raises(Busy):
            async with budget.held(f"user:{unique}", 1, HOLD):
                pass


async def test_a_cancelled_request_gives_its_share_back(budget: UploadBudget, unique: str) -> None:
    entered = asyncio.Event()

    async def slow_upload() -> None:
        async with budget.held(f"user:{unique}", 10 * MiB, HOLD):
            entered.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(slow_upload())
    await entered.wait()
    assert await budget.in_flight() == 10 * MiB
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await budget.in_flight() == 0


async def test_a_share_left_by_a_process_that_died_stops_counting_at_its_expiry(
    budget: UploadBudget, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    def left_behind(session: Session) -> None:
        for i, expires in enumerate((utcnow() - dt.timedelta(seconds=1), utcnow() + dt.timedelta(seconds=HOLD))):
            session.add(UploadReservation(caller=f"user:{unique}-dead{i}", size=30 * MiB, expires_at=expires))

    await run_write(sessions, left_behind)
    assert await budget.in_flight() == 30 * MiB  # the expired one no longer counts
    async with budget.held(f"user:{unique}", 30 * MiB, HOLD):
        with pytest.raises(Busy) as refused:
            async with budget.held(f"user:{unique}-other", 10 * MiB, HOLD):
                pass
        assert str(refused.value) == str(UPLOADS_FULL)
    await run_write(sessions, lambda s: s.execute(delete(UploadReservation)))
