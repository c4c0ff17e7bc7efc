"""Sign-ins per client address: the gateway's half of the limits.

Sign-in is anonymous, and only the gateway sees the client's address (the chat service sees the
gateway), so this limit lives here; the per-share-link limit, which must hold across gateway
replicas, is the chat service's (``services.chat.access.visitors``). Counting is ``limits``' moving
window in this process's memory: each gateway replica counts its own clients, so N replicas
admit at most N times the setting per address, and the per-link limit bounds the total. IPv6
clients are counted per /64 (``kbcore.addresses.client_address``).

Visitor and password sign-ins share one count; redeeming a one-time sign-in link has a count of
its own, so that password guesses (or visitors) from an address do not hold back the link an
administrator sent to someone there: a link is 192 random bits, nothing to guess. A refusal says
in ``Retry-After`` when the window lets the address in again.
"""

from __future__ import annotations

import math
import time

from fastapi import Request
from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from gateway.errors import ApiError, retry_after
from kbcore.addresses.client_address import address_key
from kbcore.words.said import said

SIGN_IN = "sign-in"  # visitors' and passwords'
SIGN_IN_LINK = "sign-in-link"
TOO_MANY = said("too_many_sign_ins_address_try")


class SignInLimiter:
    """At most ``per_minute`` sign-ins per client address in any 60 s (a moving window, so no
    burst of twice the limit across a minute boundary)."""

    def __init__(self, per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    async def admit(self, address: str, kind: str = SIGN_IN) -> bool:
        return await self._limiter.hit(self._item, kind, address_key(address))

    async def seconds_to_wait(self, address: str, kind: str = SIGN_IN) -> int:
        """How long until ``address`` may sign in again (the oldest counted attempt leaves the window)."""
        stats = await self._limiter.get_window_stats(self._item, kind, address_key(address))
        return math.ceil(max(0.0, stats.reset_time - time.time()))


async def _admitted(request: Request, kind: str) -> None:
    limiter: SignInLimiter = request.app.state.signin_limiter
    address = request.client.host if request.client else ""
    if not await limiter.admit(address, kind):
        raise ApiError(429, TOO_MANY, retry_after(await limiter.seconds_to_wait(address, kind)))


async def signin_admitted(request: Request) -> None:
    """Route dependency: 429 once the caller's address has signed in (as a visitor or with a
    password) too often."""
    await _admitted(request, SIGN_IN)


async def link_admitted(request: Request) -> None:
    """Route dependency: 429 once the caller's address has redeemed sign-in links too often."""
    await _admitted(request, SIGN_IN_LINK)
