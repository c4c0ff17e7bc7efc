"""The shared ending of the tree checks in ``scripts/``: print each offender, then one line of
advice, and exit 1 when there is any, so ``make lint`` stops on the first failing check."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path


def run(argv: list[str], offenders: Callable[[Path], Iterable[str]], advice: Callable[[int], str]) -> int:
    """Check ROOT (``argv[1]``, the repository by default); ``advice(n)`` ends a failing report."""
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found = list(offenders(root.resolve()))
    for line in found:
        sys.stdout.write(line + "\n")
    if found:
        sys.stdout.write(advice(len(found)) + "\n")
        return 1
    return 0
