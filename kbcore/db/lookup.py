"""Reading one row by primary key, or saying plainly that it does not exist."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.engine import run_read
from kbcore.errors import NotFound
from kbcore.words.said import said

Row = TypeVar("Row")


async def require_row(sessions: async_sessionmaker[AsyncSession], model: type[Row], key: Any, label: str) -> Row:
    """The row of ``model`` with primary key ``key``; NotFound ("<label> <key> does not exist") otherwise."""
    row = await run_read(sessions, lambda session: session.get(model, key))
    if row is None:
        raise NotFound(said("does_not_exist", label=label, key=key))
    return row
