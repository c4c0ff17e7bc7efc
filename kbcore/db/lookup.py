"""Reading one row by primary key, or saying plainly that it does not exist."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.engine import run_read
from kbcore.errors import NotFound
from kbcore.words.said import Said

Row = TypeVar("Row")


async def require_row(
    sessions: async_sessionmaker[AsyncSession], model: type[Row], key: Any, missing: Callable[[Any], Said]
) -> Row:
    """The row of ``model`` with primary key ``key``; otherwise NotFound with the words
    ``missing(key)`` makes (each kind of row has its own sentence, the kind named in each language)."""
    row = await run_read(sessions, lambda session: session.get(model, key))
    if row is None:
        raise NotFound(missing(key))
    return row
