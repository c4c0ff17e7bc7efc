"""A secret the local processes share through a private file in the data folder.

Used when the environment sets none (the embedded demo: ``make run`` needs no setup): whichever
process asks first creates the file (mode 0600), and every process sharing the data folder
reads the same value from it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def shared_secret(path: Path, make: Callable[[], str]) -> str:
    """The secret kept in ``path``, created with ``make()`` by the first process that asks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # Written whole under a private name, then linked into place: a process starting at the
        # same moment sees either no file or the complete secret, never an empty one, and the
        # first link wins (a second one fails and reads the winner's).
        draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(make())
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()
