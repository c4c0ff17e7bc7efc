"""The one failure the CLI reports (a line on stderr and exit code 1), and why a file could not
be read, said in the run's words."""

from __future__ import annotations

import errno

from cli.words import Phrase


class CliError(Exception):
    """What went wrong, as a ``Phrase`` to be said in the run's language where it is printed
    (the gateway's own sentence, already in that language, travels in a hole)."""

    def __init__(self, key: str, **holes: object) -> None:
        super().__init__(key)
        self.phrase = Phrase(key, holes)


# The reasons a file cannot be read that a person meets, in words; any other is named by its
# errno code (``ENOSPC``), which is the same in every language and what a search would find.
_READ_REASONS = {
    errno.ENOENT: "errors.missing_file",
    errno.EACCES: "errors.not_allowed",
    errno.EPERM: "errors.not_allowed",
    errno.EISDIR: "errors.is_folder",
}


def read_reason(exc: OSError) -> Phrase:
    """Why a file could not be read, in the run's words rather than the system's English."""
    if exc.errno in _READ_REASONS:
        return Phrase(_READ_REASONS[exc.errno])
    return Phrase("errors.system", {"code": errno.errorcode.get(exc.errno or 0, str(exc.errno))})


def cannot_read(path: object, exc: OSError) -> CliError:
    return CliError("errors.cannot_read", path=path, reason=read_reason(exc))
