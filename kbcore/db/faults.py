"""Which database errors are an outage rather than a bug.

A refused or dropped connection, a pool that cannot hand one out, a full disk: retrying later
may help, so callers hear UNAVAILABLE (HTTP 503) with a message that names no host, port,
database or SQL. Anything else the database raises (a constraint, a bad statement) is a fault
of ours and stays an internal error. The one place that decides; ``kbcore.grpc_errors`` and the
record save's retry both ask it.
"""

from __future__ import annotations

from sqlalchemy import exc

from kbcore.errors import Unavailable

DATABASE_UNAVAILABLE = "the database is unavailable; try again shortly"
DRIVERS = frozenset({"psycopg", "asyncpg", "sqlite3", "aiosqlite"})
DRIVER_OUTAGES = frozenset({"OperationalError", "InterfaceError", "ConnectionDoesNotExistError", "ConnectionTimeout"})


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached or could not do the work now."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, exc.OperationalError | exc.InterfaceError | exc.DisconnectionError | exc.TimeoutError):
        return True
    # A driver's own connection error that escaped SQLAlchemy's wrapping.
    driver = type(error).__module__.split(".")[0]
    return driver in DRIVERS and type(error).__name__ in DRIVER_OUTAGES


def as_unavailable(error: BaseException) -> BaseException:
    """``error`` as the domain's Unavailable when it is an outage (its text is dropped: it names
    the server and the statement), else unchanged."""
    return Unavailable(DATABASE_UNAVAILABLE) if is_outage(error) else error
