"""An earlier revision of this repository as a runnable tree, for measuring it beside this one.

A temporary git worktree of the revision, sharing this tree's virtual environment (no install:
the point is the same interpreter and libraries, so only our code differs) with that revision's
own generated gRPC stubs; removed when the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"


@contextlib.contextmanager
def revision_tree(revision: str) -> Iterator[Path]:
    """The revision checked out in a temporary folder; CalledProcessError when git or the
    stubs' generation fails (not a git clone, an unknown revision)."""
    with tempfile.TemporaryDirectory(prefix="kb-revision-") as folder:
        tree = Path(folder) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision],
            check=True,
            capture_output=True,
            text=True,
        )
        try:
            (tree / ".venv").symlink_to(ROOT / ".venv")
            # Not through make, whose rule would reinstall the shared environment.
            env = {**os.environ, "PYTHON": str(PYTHON)}
            subprocess.run(["scripts/gen_protos.sh"], cwd=tree, env=env, check=True, capture_output=True, text=True)
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
