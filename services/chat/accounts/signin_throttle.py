"""Failed password sign-ins, counted in 15-minute windows in the database's rate windows
(``services.chat.callers.rate_windows``), so the limits hold across every chat-service process:

- per username *from one client address* (``KB_SIGNIN_FAILURES``): guesses at one account from
  one place;
- per client address (``KB_SIGNIN_ADDRESS_FAILURES``, IPv6 per /64: ``kbcore.addresses.client_address``):
  guesses at many accounts from one place.

Nothing is counted per username alone: a count anyone anywhere can fill would let an outsider
keep a known account (``admin``) out, right password and all, by failing on purpose. So failures
from one address never refuse the right password from another, and a one-time sign-in link is
never counted. Guessing from many addresses at once is bounded by each address's counts and the
slow password hash; the audit trail records each failure with its address. A call that names no
address (a gRPC caller other than the gateway) is counted as one address of its own, "".

An attempt takes its place in both counts *before* the password is checked, and a sign-in that
succeeds gives its place back: so attempts sent all at once cannot slip past the limit while
their passwords are being checked, a successful sign-in does not count, and once the limit is
reached no password is checked at all (the attempt is refused, RESOURCE_EXHAUSTED, with the
seconds until the window ends, which the gateway's 429 says in ``Retry-After``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.addresses.client_address import address_key
from kbcore.db.tables import RateWindow
from kbcore.errors import RateLimited
from kbcore.words.said import said
from services.chat.callers.rate_windows import minute_window, prune_earlier_windows, take

WINDOW_MINUTES = 15
ACCOUNT_FROM_ADDRESS = "user-at"
ADDRESS = "address"
TOO_MANY_FOR_ACCOUNT = "too_many_failed_sign_ins_username"  # "… try again in {minutes} min, …"
TOO_MANY_FROM_ADDRESS = "too_many_failed_sign_ins_address"


def quarter_hour_window(now: dt.datetime | None = None) -> str:
    """The current 15-minute UTC window, named by its first minute (``2026-11-30T07:30``): the
    same shape as ``minute_window``, so a key's earlier windows sort before it and are pruned."""
    now = now or dt.datetime.now(dt.UTC)
    return minute_window(now.replace(minute=now.minute - now.minute % WINDOW_MINUTES, second=0, microsecond=0))


def seconds_left(now: dt.datetime | None = None) -> int:
    """Seconds until the current 15-minute window ends (at least one)."""
    now = now or dt.datetime.now(dt.UTC)
    into = (now.minute % WINDOW_MINUTES) * 60 + now.second + now.microsecond / 1e6
    return max(1, math.ceil(WINDOW_MINUTES * 60 - into))


def too_many(kind: str, seconds: int) -> RateLimited:
    """The refusal once the ``kind`` count is full: when to try again, and the way that always works."""
    minutes = max(1, math.ceil(seconds / 60))
    if kind == ACCOUNT_FROM_ADDRESS:
        return RateLimited(said(TOO_MANY_FOR_ACCOUNT, minutes=minutes), seconds)
    return RateLimited(said(TOO_MANY_FROM_ADDRESS, minutes=minutes), seconds)


def _key(kind: str, value: str) -> str:
    """A window key that holds no username or address in the clear, and fits the column."""
    return f"sign-in-{kind}:{hashlib.sha256(value.encode()).hexdigest()[:40]}"


def counted_keys(username: str, client_address: str) -> tuple[tuple[str, str], ...]:
    """The (kind, key) pairs an attempt at ``username`` from ``client_address`` is counted under."""
    where = address_key(client_address)
    return ((ACCOUNT_FROM_ADDRESS, _key(ACCOUNT_FROM_ADDRESS, f"{where}\n{username}")), (ADDRESS, _key(ADDRESS, where)))


@dataclass(frozen=True)
class Attempt:
    """The places one sign-in attempt took: the keys counted, in which window."""

    keys: tuple[str, ...]
    window: str


class SignInThrottle:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], failures: int, address_failures: int) -> None:
        """``failures`` per username from one address, ``address_failures`` per address."""
        self._sessions = sessions
        self._limits = {ACCOUNT_FROM_ADDRESS: failures, ADDRESS: address_failures}

    async def begin(self, username: str, client_address: str) -> Attempt:
        """Count an attempt at ``username`` from ``client_address``; RateLimited, with nothing
        counted, when either count is used up in this window."""
        counted = counted_keys(username, client_address)
        window = quarter_hour_window()
        for _, key in counted:
            await prune_earlier_windows(self._sessions, key, window)
        async with self._sessions.begin() as session:
            for kind, key in counted:
                if not await take(session, key, window, self._limits[kind]):
                    raise too_many(kind, seconds_left())  # inside the transaction: neither count is kept
        return Attempt(tuple(key for _, key in counted), window)

    async def succeeded(self, attempt: Attempt) -> None:
        """Give back the places of an attempt that signed in: success is not a failure."""
        async with self._sessions.begin() as session:
            await session.execute(
                update(RateWindow)
                .where(RateWindow.key.in_(attempt.keys), RateWindow.window == attempt.window, RateWindow.hits > 0)
                .values(hits=RateWindow.hits - 1)
            )
