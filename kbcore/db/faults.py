"""Which database errors are an outage rather than a bug.

A refused or dropped connection, a pool that cannot hand one out, a full disk: retrying later
may help, so callers hear UNAVAILABLE (HTTP 503) with a message that names no host, port,
database or SQL; a full disk (SQLite's SQLITE_FULL, PostgreSQL's SQLSTATE 53100) is the
domain's StorageFull instead (HTTP 507), which says what the operator has to do. Anything else
the database raises (a constraint, a bad statement) is a fault of ours and stays an internal
error. The one place that decides; ``kbcore.rpc.error_mapping`` and the record save's retry both ask it.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import exc

from kbcore.errors import StorageFull, Unavailable
from kbcore.words.said import said

DATABASE_UNAVAILABLE = said("database_unavailable_try_again_shortly")
DRIVERS = frozenset({"psycopg", "asyncpg", "sqlite3", "aiosqlite"})
DRIVER_OUTAGES = frozenset({"OperationalError", "InterfaceError", "ConnectionDoesNotExistError", "ConnectionTimeout"})
DISK_FULL_SQLSTATE = "53100"  # PostgreSQL's disk_full
SQLITE_FULL = "database or disk is full"  # SQLite's message for SQLITE_FULL


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` says the database could not be reached or could not do the work now."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, exc.OperationalError | exc.InterfaceError | exc.DisconnectionError | exc.TimeoutError):
        return True
    # A driver's own connection error that escaped SQLAlchemy's wrapping.
    driver = type(error).__module__.split(".")[0]
    return driver in DRIVERS and type(error).__name__ in DRIVER_OUTAGES


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the database's disk is full (an outage too: it passes once space
    is back), whichever driver raised it and whether or not SQLAlchemy wrapped it."""
    cause = error.orig if isinstance(error, exc.DBAPIError) and error.orig is not None else error
    if getattr(cause, "sqlstate", None) == DISK_FULL_SQLSTATE:
        return True
    if not isinstance(cause, sqlite3.Error):
        return False
    return getattr(cause, "sqlite_errorname", "") == "SQLITE_FULL" or SQLITE_FULL in str(cause)


def as_unavailable(error: BaseException) -> BaseException:
    """``error`` as the domain's StorageFull when the database's disk is full, as Unavailable
    when it is another outage (the driver's text is dropped: it names the server and the
    statement), else unchanged."""
    if is_disk_full(error):
        return StorageFull()
    return Unavailable(DATABASE_UNAVAILABLE) if is_outage(error) else error
