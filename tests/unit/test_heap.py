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


LARGE_BLOCKS = """
import sys, threading
from kbcore.process.heap import return_large_blocks
if sys.argv[1] == "returned":
    assert return_large_blocks()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
kept = []
def uploads():  # a larger message once, then upload pieces in flight beside what outlives them
    once = bytearray(4 << 20)
    del once
    pieces = []
    for _ in range(40):
        pieces.append(bytearray(1 << 20))
        kept.append(bytearray(2000))
    del pieces
start = rss()
for _ in range(3):
    threads = [threading.Thread(target=uploads) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
print(int(rss() - start))
"""


def test_large_blocks_are_given_back_once_freed_even_among_what_outlives_them() -> None:
    """480 MiB of 1 MiB pieces through four threads at a time, each beside small allocations that
    stay: with the blocks mapped on their own, the process keeps none of them (glibc's default
    kept about 120 MB of them here, carved from its arenas)."""

    def kept_mb(mode: str) -> int:
        done = subprocess.run([sys.executable, "-c", LARGE_BLOCKS, mode], capture_output=True, text=True, check=True)
        return int(done.stdout)

    returned, default = kept_mb("returned"), kept_mb("default")
    print(f"\nkept after 480 MiB of pieces: {returned} MB (given back), {default} MB (glibc's default)")
    assert returned < 16, returned
