"""An upload burst against the stack as separate processes: twelve 49.5 MiB uploads sent at
once, each refused one sent again after its ``Retry-After`` until all are taken in (what a client
that honours the header does). What a user and an operator see: each process's peak memory (the
gateway; the retrieval service, and its checking and parsing children together), the uploads
refused at first and in all, the time until every upload was taken in and until every document
was ready, the retrieval service's memory afterwards, and what was left behind (shares of the
budget, stored bytes of ended jobs, spooled files).

The budget is the default ``KB_UPLOAD_BUDGET_MB`` (256) with one caller allowed all of it
(``KB_UPLOAD_CALLER_MB=256``): the burst comes from one client, and what it meets is the
deployment's budget, as many uploaders at once would. The files are one page of text and a large
photo (``tests.fixtures.big_uploads``): what is measured is the upload's way in, not the parsing.

``python -m bench.upload_burst`` (or ``python -m bench --only upload_burst``) runs this section alone.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.processes import gateway_client, running_stack
from bench.table import Row, run_alone
from tests.fixtures.big_uploads import BURST_BYTES
from tests.upload_burst import (
    MemoryWatch,
    burst_files,
    leftovers,
    rss_mb,
    settled_rss_mb,
    until_ready,
    upload_burst,
)

SECTION = "upload burst"
UPLOADS = 12
GATEWAY_TARGET_MB, RETRIEVAL_TARGET_MB, BACK_WITHIN_MB = 300, 800, 100
SETTINGS = {"KB_UPLOAD_CALLER_MB": "256"}


async def run() -> tuple[list[Row], dict[str, Any]]:
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kb-burst-") as folder:
        files = burst_files(Path(folder), UPLOADS, BURST_BYTES, tag="bench")
        async with running_stack(SETTINGS) as (info, _):
            pids = {name: int(info["pids"][name]) for name in ("gateway", "retrieval")}
            async with gateway_client(info, timeout=600) as client:
                dataset = (await client.post("/api/dataset", json={"name": "上传洪峰"})).json()["data"]["id"]
                start = {name: rss_mb(pid) for name, pid in pids.items()}
                async with MemoryWatch(pids).watching() as watch:
                    burst = await upload_burst(client, dataset, files, again=True)
                    ready = await until_ready(client, dataset, burst.documents, timeout=900)
                after = await settled_rss_mb(pids["retrieval"], start["retrieval"] + BACK_WITHIN_MB, seconds=30)
            left = leftovers(Path(info["data_dir"]))
    first = [answer.status for answer in burst.first]
    raw = {
        "uploads": UPLOADS,
        "upload_mib": BURST_BYTES / 2**20,
        "start_mb": start,
        "peak_mb": watch.peaks,
        "retrieval_children_peak_mb": watch.children_peaks.get("retrieval", 0.0),
        "first_accepted": first.count(200),
        "first_refused": first.count(503),
        "refusals": dict(burst.refusals),
        "attempts": burst.attempts,
        "seconds_stored": burst.seconds_stored,
        "seconds_ready": burst.seconds_stored + ready,
        "retrieval_after_mb": after,
        "left_behind": left,
        "seconds": time.perf_counter() - began,
    }
    return _rows(raw), raw


def _rows(raw: dict[str, Any]) -> list[Row]:
    burst = f"{raw['uploads']} × {raw['upload_mib']:.1f} MiB at once"
    start, peak = raw["start_mb"], raw["peak_mb"]
    back = raw["retrieval_after_mb"] - start["retrieval"]
    left = raw["left_behind"]
    return [
        Row(
            SECTION,
            f"{burst}: gateway's peak RSS (from {start['gateway']:.0f} MB)",
            f"{peak['gateway']:.0f} MB",
            f"< {GATEWAY_TARGET_MB} MB",
            peak["gateway"] < GATEWAY_TARGET_MB,
        ),
        Row(
            SECTION,
            f"{burst}: retrieval service's peak RSS (from {start['retrieval']:.0f} MB)",
            f"{peak['retrieval']:.0f} MB",
            f"< {RETRIEVAL_TARGET_MB} MB",
            peak["retrieval"] < RETRIEVAL_TARGET_MB,
        ),
        Row(
            SECTION,
            f"{burst}: the retrieval service's checking and parsing children together, at most",
            f"{raw['retrieval_children_peak_mb']:.0f} MB",
        ),
        Row(
            SECTION,
            f"{burst}: first answers (503 with Retry-After past KB_UPLOAD_BUDGET_MB)",
            f"{raw['first_accepted']} taken, {raw['first_refused']} refused",
        ),
        Row(
            SECTION,
            f"{burst}, each refused one sent again after Retry-After: attempts until all were taken in",
            f"{raw['attempts']} ({sum(raw['refusals'].values())} refused)",
        ),
        Row(SECTION, f"{burst}: seconds until all were taken in", f"{raw['seconds_stored']:.0f} s"),
        Row(SECTION, f"{burst}: seconds until every document was ready", f"{raw['seconds_ready']:.0f} s"),
        Row(
            SECTION,
            f"{burst}: retrieval service's RSS afterwards, over its start",
            f"{back:+.0f} MB",
            f"≤ {BACK_WITHIN_MB} MB",
            back <= BACK_WITHIN_MB,
        ),
        Row(
            SECTION,
            f"{burst}: left behind (shares of the budget, stored bytes of ended jobs, spooled files)",
            f"{left['shares']}, {left['job chunks']}, {left['spooled files']}",
            "0, 0, 0",
            not any(left.values()),
        ),
    ]


if __name__ == "__main__":
    run_alone(run)
