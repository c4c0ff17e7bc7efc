"""A claimed job's paragraphs, from the original it stored: parsed in the worker, never in the request."""

from __future__ import annotations

from collections.abc import Callable

from services.retrieval.jobs.queue import ClaimedJob
from services.retrieval.jobs.uploads import PARAGRAPHS, paragraphs_of
from services.retrieval.parsing import DocumentRejected, ParseLimits, parse_document
from services.retrieval.splitter import SplitParagraph


def job_parser(limits: ParseLimits) -> Callable[[ClaimedJob], list[SplitParagraph]]:
    """The worker's parser: CPU-bound, run in a thread, refusing with a message the document shows."""

    def parse(job: ClaimedJob) -> list[SplitParagraph]:
        if job.source_type == PARAGRAPHS:
            paragraphs = paragraphs_of(job.source)
        else:
            paragraphs = parse_document(job.filename, job.source, limits).paragraphs
        if len(paragraphs) > limits.max_paragraphs:
            raise DocumentRejected(
                f"{job.filename!r} has {len(paragraphs)} paragraphs; the limit is {limits.max_paragraphs} (KB_INGEST_MAX_PARAGRAPHS)"
            )
        return paragraphs

    return parse
