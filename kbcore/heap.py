"""The garbage collector after a process has started.

What a service loads to start (modules, protobuf descriptors, SQLAlchemy's mappers, jieba's
dictionary of ~350k words, the offline model's tables) lives as long as the process, yet Python's
cyclic collector walked all of it again on every full collection: measured with ``gc.callbacks``
at 64 concurrent chats, the four processes spent about 5% of their CPU in the collector, most
of it in the rare full collections. ``gc.freeze()`` after start moves everything alive into a
generation the collector never visits (CPython's advice for long-running servers); objects made
while serving are collected as before.
"""

from __future__ import annotations

import gc


def settle_after_start() -> None:
    """Collect what starting left behind, then exempt the rest from later collections."""
    gc.collect()
    gc.freeze()
