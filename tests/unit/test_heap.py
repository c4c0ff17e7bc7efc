"""After start-up a service's heap is frozen out of the collector's reach (``kbcore.process.heap``), run in
a process of its own so the test run's collector is left as it was."""

from __future__ import annotations

import subprocess
import sys

from kbcore.process.heap import YOUNG_THRESHOLD

PROBE = """
import gc
from kbcore.process.heap import settle_after_start
before = gc.get_freeze_count()
loaded = [object() for _ in range(3)] + [{"a": []} for _ in range(1000)]  # alive, tracked
settle_after_start()
print(before, gc.get_freeze_count(), gc.get_threshold()[0])
"""


def test_what_lives_after_start_is_frozen_and_young_collections_are_rarer() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    before, frozen, young = (int(x) for x in out)
    assert before == 0 and frozen > 1000
    assert young == YOUNG_THRESHOLD > 700
