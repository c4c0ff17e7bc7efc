"""The gateway's file descriptors: raise the soft limit to the hard one at start, and size the
connection cap and the accept backlog so client connections can never use them all up.

Why: with the soft limit at the hard one and no cap on connections, 20,600 slow clients took
every descriptor, and from then on every new request was reset, the gateway's own gRPC calls
and log writes included. Each client connection is one descriptor; the rest of the process
(gRPC channels, the listening socket, log and data files) needs a few dozen, and a burst of
connections the server accepts only to refuse them with a 503 briefly holds up to a backlog's
worth more, so both are kept out of what client connections may take."""

from __future__ import annotations

import logging
import resource

# Descriptors never given to client connections: the gateway's gRPC channels, its listening
# socket, log and data files, the interpreter's own; measured at a few dozen, kept generous.
RESERVED_DESCRIPTORS = 256
DEFAULT_BACKLOG = 2048  # uvicorn's own default
LINUX_NR_OPEN = 1_048_576  # the kernel's usual per-process ceiling, used when the hard limit says "unlimited"

log = logging.getLogger("gateway")


def raise_descriptor_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; the soft limit now in force.

    A refusal by the system (a container that forbids it) keeps the old limit, and the caps
    below shrink to fit it instead."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = LINUX_NR_OPEN if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %d to %d: %s", soft, target, exc)
    return descriptor_limit()


def descriptor_limit() -> int:
    """The soft RLIMIT_NOFILE in force (an "unlimited" one counted as the kernel's ceiling)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return LINUX_NR_OPEN if soft == resource.RLIM_INFINITY else soft


def backlog_for(descriptors: int) -> int:
    """The accept backlog: uvicorn's default, smaller under a small descriptor limit, since up
    to a backlog of connections may be accepted at once before any of them is refused."""
    return max(16, min(DEFAULT_BACKLOG, descriptors // 8))


def connection_cap(requested: int, descriptors: int) -> int:
    """``requested`` open client connections, or fewer if the descriptors cannot hold them
    beside the reserve and a backlog of connections accepted only to be refused."""
    room = max(1, descriptors - RESERVED_DESCRIPTORS - backlog_for(descriptors))
    if requested > room:
        log.warning(
            "KB_HTTP_MAX_CONNECTIONS=%d is more than %d open files allow; keeping at most %d connections",
            requested,
            descriptors,
            room,
        )
    return min(requested, room)
