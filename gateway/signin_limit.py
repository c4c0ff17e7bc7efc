"""Visitor sign-in per client address: the gateway's half of the limit.

Sign-in is anonymous, and only the gateway sees the client's address (the chat service sees the
gateway), so this limit lives here; the per-share-link limit, which must hold across gateway
replicas, is the chat service's (``services.chat.access.visitors``). Counting is ``limits``' moving
window in this process's memory: each gateway replica counts its own clients, so N replicas
admit at most N times the setting per address, and the per-link limit bounds the total. IPv6
clients are counted per /64, the block one host is usually given.
"""

from __future__ import annotations

import ipaddress

from fastapi import Request
from limits import RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from gateway.errors import ApiError

RETRY_AFTER_SECONDS = 60


def client_key(address: str) -> str:
    """The address a limit is counted against: the IPv4 address, or the IPv6 /64 it is in."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.IPv6Network(f"{parsed}/64", strict=False))


class SignInLimiter:
    """At most ``per_minute`` sign-ins per client address in any 60 s (a moving window, so no
    burst of twice the limit across a minute boundary)."""

    def __init__(self, per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    async def admit(self, address: str) -> bool:
        return await self._limiter.hit(self._item, "visitor-sign-in", client_key(address))


async def signin_admitted(request: Request) -> None:
    """Route dependency: 429 once the caller's address has signed in too often."""
    limiter: SignInLimiter = request.app.state.signin_limiter
    address = request.client.host if request.client else ""
    if not await limiter.admit(address):
        raise ApiError(429, "too many sign-ins from this address; try again in a minute")
