"""A claimed job's paragraphs, from the original it stored: parsed in the worker, never in the request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from services.retrieval.ingestion.jobs.queue import ClaimedJob
from services.retrieval.ingestion.jobs.uploads import PARAGRAPHS, paragraphs_of
from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits
from services.retrieval.ingestion.parsing.sandbox import parse_in_child
from services.retrieval.ingestion.splitter import SplitParagraph

Parser = Callable[[ClaimedJob], Awaitable[list[SplitParagraph]]]


def job_parser(limits: ParseLimits) -> Parser:
    """The worker's parser: a file is parsed in a child process of its own (cancelling the call
    kills it); paragraphs sent already split only need reading back. Refusals carry the message
    the document shows."""

    async def parse(job: ClaimedJob) -> list[SplitParagraph]:
        if job.source_type == PARAGRAPHS:
            paragraphs = paragraphs_of(job.source)
        else:
            paragraphs = (await parse_in_child(job.filename, job.source, limits, job.split_rules)).paragraphs
        if len(paragraphs) > limits.max_paragraphs:
            raise DocumentRejected(
                f"{job.filename!r} has {len(paragraphs)} paragraphs; the limit is {limits.max_paragraphs} (KB_INGEST_MAX_PARAGRAPHS)"
            )
        return paragraphs

    return parse
