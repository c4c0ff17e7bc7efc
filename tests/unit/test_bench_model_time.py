"""The quality bench's count of the offline model's time: the assessment judges the evidence
through ``support``, and that inner call must not be counted a second time."""

from __future__ import annotations

import asyncio
import itertools

from bench.offline_answers import TimedOfflineModel
from kbcore.models.base import EvidenceParagraph

EVIDENCE = [EvidenceParagraph("p1", "云岭县图书馆借阅服务规则", "", "图书馆周二至周日9:00至20:00开放。")]


def ticking() -> TimedOfflineModel:
    """The model on a clock that reads one second later each time it is read; words only."""
    ticks = itertools.count()
    return TimedOfflineModel(matcher=None, clock=lambda: float(next(ticks)))


def test_an_assessment_counts_its_inner_support_once() -> None:
    # Clock readings: the assessment starts at 0, its support at 1, the assessment ends at 2
    # (counting the support too would add its own second and read 4).
    model = ticking()
    asyncio.run(model.assess("图书馆几点开门？", [], EVIDENCE, ["图书馆几点开门？"]))
    assert model.seconds == 2.0


def test_a_support_call_of_its_own_is_counted() -> None:
    model = ticking()
    asyncio.run(model.support("图书馆几点开门？", [], EVIDENCE))
    assert model.seconds == 1.0
