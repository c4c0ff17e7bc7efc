"""Parsing in a child process: what no check foresaw ends the child, never the caller. The corpus
of hostile files goes through it (as every ingestion job does), and the child's own limits
(memory, CPU time) and a cancel are shown to stop it, each with a sentence for the uploader."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse_document
from services.retrieval.ingestion.parsing.confined.sandbox import parse_in_child
from tests.fixtures import documents, hostile
from tests.process_stack import child_pids, pid_alive

LIMITS = ParseLimits()
ONE_DOCUMENT = [f for f in hostile.CORPUS if not f.filename.endswith(".zip")]  # an archive is unpacked before parsing


def children() -> set[int]:
    """The live child processes of this one (zombies excluded)."""
    return {pid for pid in child_pids(os.getpid()) if pid_alive(pid)}


@pytest.mark.parametrize("file", ONE_DOCUMENT, ids=lambda f: f.name)
async def test_every_hostile_file_of_the_corpus_is_refused_with_its_sentence(file: hostile.HostileFile) -> None:
    with pytest.raises(DocumentRejected, match=hostile.refusal_words(file)):
        await parse_in_child(file.filename, file.make(), LIMITS)


async def test_an_honest_document_parses_in_the_child_as_it_does_in_process() -> None:
    data = documents.chinese_pdf()
    assert await parse_in_child("手册.pdf", data, LIMITS) == parse_document("手册.pdf", data, LIMITS)


async def test_an_allocation_past_the_memory_limit_ends_the_child_with_a_sentence() -> None:
    """With the cell check lifted, calamine asks for the far corner's grid and aborts: only the
    child goes."""
    unchecked = ParseLimits(max_cells=10**12, memory_mb=512)
    with pytest.raises(DocumentRejected, match=r"needs more memory than parsing one file may use \(512 MiB\)"):
        await parse_in_child("库存.xlsx", hostile.xlsx_far_corner_cell(), unchecked)


async def test_a_parse_past_its_cpu_seconds_ends_with_a_sentence() -> None:
    with pytest.raises(DocumentRejected, match=r"takes more than 1 CPU seconds to parse.*KB_PARSE_CPU_SECONDS"):
        await parse_in_child("报告.pdf", documents.big_pdf(300), ParseLimits(cpu_seconds=1))


async def test_a_parse_past_its_wall_clock_bound_ends_its_child_with_a_sentence_naming_the_setting() -> None:
    """However much CPU time it has left: a busy machine must not leave a parse running for good."""
    before = children()
    started = time.monotonic()
    with pytest.raises(DocumentRejected, match=r"took more than 2 seconds of wall-clock time.*KB_INGEST_JOB_SECONDS"):
        await parse_in_child("报告.pdf", documents.big_pdf(300), ParseLimits(cpu_seconds=300, wall_seconds=2))
    assert time.monotonic() - started < 10
    assert not children() - before, "the child went with the refusal"


async def test_cancelling_a_parse_kills_its_child() -> None:
    before = children()
    parsing = asyncio.ensure_future(parse_in_child("报告.pdf", documents.big_pdf(300), LIMITS))
    deadline = time.monotonic() + 10
    while not children() - before:
        assert time.monotonic() < deadline, "the parsing child never started"
        await asyncio.sleep(0.02)
    [child] = children() - before
    parsing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parsing
    assert not pid_alive(child), "the child outlived the cancel"


def test_a_child_that_cannot_start_is_the_services_fault_not_the_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run under uvloop, the services' loop, whose pipe raises instead of breaking when the child
    is gone before it read its input."""
    import uvloop

    from services.retrieval.ingestion.parsing.confined import sandbox

    monkeypatch.setattr(sandbox, "_PROJECT_ROOT", tmp_path)  # the child's module is not found there
    with pytest.raises(RuntimeError, match="the parsing process could not run"):
        uvloop.run(parse_in_child("规定.md", "# 规定\n\n正文。".encode() * 100_000, LIMITS))
