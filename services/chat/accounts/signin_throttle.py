"""Failed sign-ins, counted per username and per client address in 15-minute windows
(``KB_SIGNIN_FAILURES`` each), in the database's rate windows
(``services.chat.access.windows``), so the limit holds across every chat-service process.

An attempt takes its place in both counts *before* the password is checked, and a sign-in that
succeeds gives its place back: so attempts sent all at once cannot slip past the limit while
their passwords are being checked, a successful sign-in does not count, and once the limit is
reached no password is checked at all (the attempt is refused, RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import RateWindow
from kbcore.errors import RateLimited
from services.chat.access.windows import minute_window, prune_earlier_windows, take

WINDOW_MINUTES = 15
TOO_MANY = (
    "too many failed sign-ins for this username or from this address; wait 15 minutes and try again,"
    " or ask an administrator for a sign-in link"
)


def quarter_hour_window(now: dt.datetime | None = None) -> str:
    """The current 15-minute UTC window, named by its first minute (``2026-11-30T07:30``): the
    same shape as ``minute_window``, so a key's earlier windows sort before it and are pruned."""
    now = now or dt.datetime.now(dt.UTC)
    return minute_window(now.replace(minute=now.minute - now.minute % WINDOW_MINUTES, second=0, microsecond=0))


def _key(kind: str, value: str) -> str:
    """A window key that holds no username or address in the clear, and fits the column."""
    return f"sign-in-{kind}:{hashlib.sha256(value.encode()).hexdigest()[:40]}"


@dataclass(frozen=True)
class Attempt:
    """The places one sign-in attempt took: the keys counted, in which window."""

    keys: tuple[str, ...]
    window: str


class SignInThrottle:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], failures: int) -> None:
        self._sessions = sessions
        self._failures = failures

    async def begin(self, username: str, client_address: str = "") -> Attempt:
        """Count an attempt for ``username`` and ``client_address`` (when known); RateLimited,
        with nothing counted, when either has used up its failures in this window."""
        keys = [_key("user", username)]
        if client_address.strip():
            keys.append(_key("address", client_address.strip()))
        window = quarter_hour_window()
        for key in keys:
            await prune_earlier_windows(self._sessions, key, window)
        async with self._sessions.begin() as session:
            for key in keys:
                if not await take(session, key, window, self._failures):
                    raise RateLimited(TOO_MANY)  # inside the transaction: neither count is kept
        return Attempt(tuple(keys), window)

    async def succeeded(self, attempt: Attempt) -> None:
        """Give back the places of an attempt that signed in: success is not a failure."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(RateWindow)
                .where(RateWindow.key.in_(attempt.keys), RateWindow.window == attempt.window, RateWindow.hits > 0)
                .values(hits=RateWindow.hits - 1)
            )
