"""The heap after a process has started: the garbage collector, and where large blocks come from.

What a service loads to start (modules, protobuf descriptors, SQLAlchemy's mappers, jieba's
dictionary of ~350k words, the offline model's tables) lives as long as the process, yet Python's
cyclic collector walked all of it again on every full collection (measured with ``gc.callbacks``
at 64 concurrent chats: a few per cent of the chat service's and the gateway's CPU, most of it
in the rare full collections). ``gc.freeze()`` after
start moves everything alive into a generation the collector never visits (CPython's advice
for long-running servers). Objects made
while serving are collected as before, the young ones every ``YOUNG_THRESHOLD`` allocations
instead of 700: most die by reference counting before any collection sees them, and a
collection that runs less often finds fewer survivors to promote. What it measured:
bench/HISTORY.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

YOUNG_THRESHOLD = 20_000  # allocations between young collections (CPython: 700)
LARGE_BLOCK_BYTES = 1 << 20  # an upload's piece (``kbcore.limits.UPLOAD_CHUNK_BYTES``) and up
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def settle_after_start() -> None:
    """Collect what starting left behind, then exempt the rest from later collections; and have
    large blocks given back when freed (``return_large_blocks``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 20, 20)
    return_large_blocks()


def return_large_blocks() -> bool:
    """Blocks of ``LARGE_BLOCK_BYTES`` or more (the pieces of an upload as they pass through)
    mapped from the system and given back the moment they are freed. glibc does so only until
    the first such block is freed, then raises its threshold to that size (up to 32 MiB), and
    later blocks are carved from the threads' arenas, where whatever outlives them keeps the memory
    with the process (``tests/unit/test_heap.py``: 480 MiB of pieces through four threads kept
    about 120 MB, none with this). Twelve 49.5 MiB uploads at once left the gateway 24 MB up and
    the retrieval service 60 to 73; with this, 2 and about 45 (the rest is the jobs' own work).
    False where the C library is not glibc (nothing to do)."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return False
    return bool(mallopt is not None and mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES) == 1)
