"""Checking an uploaded file in a child process of its own (``check_child``), as it lies in the
spool: the request that received it learns what it is and whether it passes its bounds without
ever reading it into the service's memory, and a hostile file's cost ends with the child."""

from __future__ import annotations

from pathlib import Path

from services.retrieval.ingestion.parsing.confined.check_child import check_argument
from services.retrieval.ingestion.parsing.confined.sandbox import answer_of, run_confined
from services.retrieval.ingestion.parsing.document import ParseLimits
from services.retrieval.ingestion.parsing.upload_check import CheckedFile

CHECKER = "services.retrieval.ingestion.parsing.confined.check_child"


async def check_in_child(filename: str, path: Path, limits: ParseLimits, members: Path | None) -> list[CheckedFile]:
    """``upload_check.check_upload`` of the file at ``path`` under ``limits``, in a child process;
    every refusal is a ``DocumentRejected`` with a sentence. Cancelling this call kills the child."""
    output = await run_confined(CHECKER, check_argument(filename, path, members, limits), filename, limits, None)
    result = answer_of(output)
    return [CheckedFile(**file) for file in result["files"]]
