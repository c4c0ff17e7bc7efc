"""A claimed job's paragraphs, from the original it stored: parsed in the worker, never in the request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from kbcore.words.said import said
from services.retrieval.ingestion.jobs.queue import ClaimedJob
from services.retrieval.ingestion.jobs.uploads import PARAGRAPHS, paragraphs_of
from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits
from services.retrieval.ingestion.parsing.confined.sandbox import parse_in_child
from services.retrieval.ingestion.splitter import SplitParagraph

Parser = Callable[[ClaimedJob], Awaitable[list[SplitParagraph]]]
# A job's original, piece by piece (``JobQueue.source``).
SourceReader = Callable[[str], AsyncIterator[bytes]]


def job_parser(limits: ParseLimits, source: SourceReader) -> Parser:
    """The worker's parser: a file is fed to a child process of its own piece by piece as it is
    read from SQL (cancelling the call kills it), so this process never holds it whole;
    paragraphs sent already split only need reading back. Refusals carry the message the
    document shows."""

    async def parse(job: ClaimedJob) -> list[SplitParagraph]:
        if job.source_type == PARAGRAPHS:
            paragraphs = paragraphs_of(b"".join([piece async for piece in source(job.id)]))
        else:
            parsed = await parse_in_child(job.filename, source(job.id), limits, job.split_rules)
            paragraphs = parsed.paragraphs
        if len(paragraphs) > limits.max_paragraphs:
            raise DocumentRejected(
                said(
                    "has_paragraphs_limit_kb_ingest_max",
                    job_filename=f"{job.filename!r}",
                    len_paragraphs=len(paragraphs),
                    limits_max_paragraphs=limits.max_paragraphs,
                )
            )
        return paragraphs

    return parse
