"""The garbage collector after a process has started.

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

import gc

YOUNG_THRESHOLD = 20_000  # allocations between young collections (CPython: 700)


def settle_after_start() -> None:
    """Collect what starting left behind, then exempt the rest from later collections."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, 20, 20)
