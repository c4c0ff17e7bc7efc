"""Parsing one file in a child process of its own, so no file can kill or bloat the service.

A parser library can abort the whole process (calamine's allocation failure), hold gigabytes
(pdfminer inflating a stream whole) or run for minutes (a 50,000-page PDF); none of that can be
caught in the process that answers questions, and memory a Python process took is rarely given
back. So each file is parsed by ``python -m services.retrieval.ingestion.parsing.confined.child`` under its own
address-space and CPU-time limits, and when the child ends, its memory ends with it; one that
neither finishes nor uses its CPU time (a machine too busy to give it any) is killed at the
ingestion job's wall-clock bound (``KB_INGEST_JOB_SECONDS``). Cancelling the awaiting task kills
the child at once. A fresh interpreter per file costs about 0.1 s,
against seconds of parsing for any file worth the trouble.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

from kbcore.process.child_process import Child, start_child
from kbcore.words.said import Said, said
from services.retrieval.ingestion.parsing.confined.child import PARSER_FAILED, request_argument
from services.retrieval.ingestion.parsing.document import (
    PAST_WALL_CLOCK,
    DocumentRejected,
    ParsedDocument,
    ParseLimits,
)
from services.retrieval.ingestion.split_rules import DEFAULT_RULES, SplitRules
from services.retrieval.ingestion.splitter import SplitParagraph

log = logging.getLogger(__name__)

_PROJECT_ROOT = Path(__file__).resolve().parents[5]
PARSER = "services.retrieval.ingestion.parsing.confined.child"
# A file for a child: its bytes, or its pieces as they are read (from SQL, from the spool).
Input = bytes | AsyncIterable[bytes]


def _refusal(filename: str, returncode: int, limits: ParseLimits) -> DocumentRejected | RuntimeError:
    """What to raise for a child that ended without a result: the sentence when its file was the
    cause, RuntimeError when it could not do its work at all (the service's fault, told as an
    internal error)."""
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return DocumentRejected(
            said("takes_more_cpu_seconds_parse_too", filename=f"{filename!r}", limits_cpu_seconds=limits.cpu_seconds)
        )
    if returncode in (-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS):
        return DocumentRejected(
            said("needs_more_memory_parsing_one_file_2", filename=f"{filename!r}", limits_memory_mb=limits.memory_mb)
        )
    if returncode == PARSER_FAILED:
        return DocumentRejected(said("cannot_be_read_damaged_uses_feature", filename=f"{filename!r}"))
    return RuntimeError(f"the parsing process could not run (exit status {returncode}); its log line says why")


def answer_of(output: bytes) -> dict[str, Any]:
    """A child's answer (``child.answer_parent``); a refusal in it raised as the child raised it,
    with its words."""
    result: dict[str, Any] = json.loads(output)
    if "rejected" in result:
        raise DocumentRejected(Said.from_json(result["rejected"]))
    return result


def _parsed(filename: str, output: bytes) -> ParsedDocument:
    result = answer_of(output)
    paragraphs = [
        SplitParagraph(title, content, tuple(questions)) for title, content, questions in result["paragraphs"]
    ]
    return ParsedDocument(result["title"], paragraphs, tuple(result["unused_separators"]))


async def _exchange(child: Child, data: Input | None) -> tuple[bytes, bytes]:
    """The file in (if it is fed), the result and the log out, and the child's end."""
    feeding = child.feed(data) if data is not None else asyncio.sleep(0)
    _, output, errors = await asyncio.gather(feeding, child.stdout.read(), child.stderr.read())
    await child.wait()
    return output, errors


async def parse_in_child(
    filename: str, data: Input, limits: ParseLimits, rules: SplitRules = DEFAULT_RULES
) -> ParsedDocument:
    """``parse_document`` of the file (its bytes, or its pieces as they are read), cut by
    ``rules``, run in a child process under ``limits``; every refusal is a ``DocumentRejected``
    with a sentence. Cancelling this call kills the child."""
    argument = request_argument(filename, limits, rules)
    return _parsed(filename, await run_confined(PARSER, argument, filename, limits, data))


async def run_confined(module: str, argument: str, filename: str, limits: ParseLimits, data: Input | None) -> bytes:
    """``python -m module argument``, a child that confines itself to ``limits`` (``child.confine``)
    and works on ``filename``, fed ``data`` when given; its output, or the ``DocumentRejected``
    (or RuntimeError: not the file's fault) its end means. Cancelling this call kills the child."""
    child = await start_child(
        [sys.executable, "-m", module, argument],
        cwd=_PROJECT_ROOT,
        # A Rust abort says why in one line; a crash in C leaves the Python stack in the log.
        env={**os.environ, "RUST_BACKTRACE": "0", "PYTHONFAULTHANDLER": "1"},
        with_input=data is not None,
    )
    try:
        # A child that neither finishes nor uses its CPU time (the machine is busy) is still ended.
        output, errors = await asyncio.wait_for(_exchange(child, data), limits.wall_seconds)
    except TimeoutError:
        log.warning("parsing %r ran past its wall-clock bound; the child was killed", filename)
        words = said(PAST_WALL_CLOCK, filename=f"{filename!r}", seconds=f"{limits.wall_seconds:g}")
        raise DocumentRejected(words) from None
    finally:
        if child.returncode is None:  # cancelled, or timed out: the child goes with the call
            child.kill()
            await child.wait()
    if child.returncode != 0:  # the first lines say why (a traceback's last line is cut from the end)
        told = errors.decode(errors="replace")
        told = told if len(told) <= 2000 else f"{told[:1000]} … {told[-1000:]}"
        log.warning("parsing %r ended with exit status %s: %s", filename, child.returncode, told)
        raise _refusal(filename, child.returncode or 0, limits)
    return output
