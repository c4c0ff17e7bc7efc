"""Files and folders only the service's own user can read: the data folder, the SQLite database and
its WAL, like the secrets beside them (``kbcore.rpc.local_secret``).

A database holds every conversation, document and credential hash; the default umask leaves a
new file readable by every user of the machine (0644). New ones are created private, and existing
ones are made private when a service starts (or the database is migrated), so a deployment made
before this rule is tightened too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> None:
    """``path`` as a folder only its owner may enter: created so (with any missing parents), or
    tightened to that."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) != FOLDER_MODE:
        path.chmod(FOLDER_MODE)


def private_file(path: Path) -> bool:
    """``path`` as a file only its owner may read or write: created empty when missing (True), or
    tightened to that when it exists (False)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
        return True
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
            path.chmod(FILE_MODE)
        return False


def tighten_if_present(path: Path) -> None:
    """Make ``path`` private when it exists (a WAL left by an earlier run, which may go meanwhile)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_IMODE(path.stat().st_mode) != FILE_MODE:
            path.chmod(FILE_MODE)
