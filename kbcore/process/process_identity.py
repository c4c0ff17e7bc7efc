"""Who a process is, written so that another process on the same host can prove it dead.

A chat lease names its holder, and a holder killed mid-answer leaves its lease until it
expires. When the holder's name carries this identity, a process that finds the chat held can
tell for certain that the holder is gone and take the chat over at once.

The identity is ``host.pid.start``:

- ``host``: a hash of the kernel's boot id, the pid namespace and the user id. Processes with
  the same host key number processes alike and see each other in ``/proc``. Another machine,
  another container (its own pid namespace), a reboot or another user gives another key, and
  ``/proc`` proves nothing about the holder: it is never judged dead, its lease expires.
- ``pid`` as ``/proc`` numbers it, and ``start``: the process's start time (field 22 of
  ``/proc/<pid>/stat``, clock ticks since boot). A pid used again by a later process (a
  restarted container whose new process is pid 1 again) has a later start time, so it is not
  mistaken for the holder.

Dead means: the same host key, and ``/proc/<pid>`` is gone, names a process started at another
time, or a zombie. Anything else (another host, a ``/proc`` that cannot be read, a name without
an identity) is "cannot tell", never "dead".
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
HOST_KEY_LENGTH = 16  # hex digits: 64 bits, so two hosts never share a key by chance
_GONE = frozenset({"Z", "X", "x"})  # zombie or dead: it runs nothing any more


@dataclass(frozen=True)
class ProcessIdentity:
    host: str
    pid: int
    start: int

    def text(self) -> str:
        return f"{self.host}.{self.pid}.{self.start}"


_mine: dict[int, ProcessIdentity | None] = {}  # per pid: a forked child is not its parent


def parse(text: str) -> ProcessIdentity | None:
    """The identity ``text()`` wrote, or None for anything else."""
    host, _, rest = text.partition(".")
    pid, _, start = rest.partition(".")
    if len(host) != HOST_KEY_LENGTH or not pid.isdigit() or not start.isdigit():
        return None
    return ProcessIdentity(host, int(pid), int(start))


def current() -> ProcessIdentity | None:
    """This process's identity; None where ``/proc`` cannot tell (not Linux, or a ``/proc``
    mounted for another pid namespace than ours)."""
    pid = os.getpid()
    if pid not in _mine:
        _mine.clear()
        _mine[pid] = _read_current(pid)
    return _mine[pid]


def is_dead(identity: ProcessIdentity) -> bool:
    """True only when ``/proc`` proves the process gone; False when it lives or cannot be told."""
    mine = current()
    if mine is None or identity.host != mine.host:
        return False
    try:
        state, start = _stat(identity.pid)
    except FileNotFoundError:
        return True  # no process has this pid now
    except (OSError, ValueError, IndexError):
        return False
    return start != identity.start or state in _GONE


def _read_current(pid: int) -> ProcessIdentity | None:
    try:
        if int(os.readlink(PROC / "self")) != pid:  # this /proc numbers another namespace's processes
            return None
        boot = (PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat(PROC / "self/ns/pid").st_ino
        _, start = _stat(pid)
    except (OSError, ValueError, IndexError):
        return None
    host = hashlib.sha256(f"{boot}:{namespace}:{os.getuid()}".encode()).hexdigest()[:HOST_KEY_LENGTH]
    return ProcessIdentity(host, pid, start)


def _stat(pid: int) -> tuple[str, int]:
    """(state, start time) from ``/proc/<pid>/stat``; the command name may hold spaces and
    parentheses, so the fields are counted from its last ``)``."""
    fields = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    return fields[0], int(fields[19])
