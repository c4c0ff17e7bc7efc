"""Where an uploaded file's bytes come in: admitted against the deployment's budget
(``upload_budget``), written to the local spool as they arrive (``spool``), bounded in size.

A request holds its share of the budget from its first message to its end, its bytes counted
against what it declared; the share is released and the spool folder removed however the request
ends (stored, refused, cut off by its client, failed), so nothing is left of a request but the
job rows it wrote.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from kbcore.errors import InvalidRequest, TooLong
from kbcore.permissions.roles import Principal
from kbcore.process.disk_space import MiB
from kbcore.settings import Settings
from kbcore.words.said import said
from services.retrieval.caller_check import current_principal
from services.retrieval.ingestion.jobs.spool import UploadSpool
from services.retrieval.ingestion.jobs.upload_budget import UploadBudget

FRAMING_BYTES = MiB  # what an HTTP upload's body brings besides its file (boundaries, fields)
STORE_SECONDS = 120.0  # beyond the body's time: checking a file and writing it to SQL


def caller_key(principal: Principal | None) -> str:
    """Whose share of the budget an upload takes: the person or key the gateway resolved, or the
    deployment's own processes (the seeder) together."""
    if principal is None:
        return "service"
    return f"{principal.kind.value}:{principal.user_id or principal.application_id}"


@dataclass(frozen=True)
class UploadIntake:
    budget: UploadBudget
    spool: UploadSpool
    max_bytes: int  # one file's (KB_UPLOAD_MAX_MB)
    body_seconds: float  # what an upload's bytes may take to arrive (KB_UPLOAD_BODY_SECONDS)

    @classmethod
    def from_settings(cls, settings: Settings, budget: UploadBudget, spool: UploadSpool) -> UploadIntake:
        return cls(budget, spool, settings.upload_max_mb * MiB, settings.upload_body_seconds)

    @contextlib.asynccontextmanager
    async def admitted(self, declared: int, seconds_left: float | None) -> AsyncIterator[int]:
        """Hold ``declared`` bytes of the budget for the caller while the block runs (``Busy``
        when it cannot); yields how many bytes the request may bring. ``seconds_left``: the
        call's deadline, which the hold never outlives (a process that dies mid-request leaves a
        row that stops counting then)."""
        if declared <= 0:
            raise InvalidRequest(said("declared_bytes_must_be_size_upload"))
        allowed = self.max_bytes + FRAMING_BYTES
        if declared > allowed:
            raise TooLong(said("upload_declares_bytes_one_upload_may", declared=declared, allowed_mib=allowed // MiB))
        seconds = seconds_left if seconds_left is not None else self.body_seconds + STORE_SECONDS
        async with self.budget.held(caller_key(current_principal()), declared, seconds):
            yield declared
