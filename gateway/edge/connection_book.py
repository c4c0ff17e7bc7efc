"""How many client connections the gateway holds open, in all and per client address: the
count behind the connection caps (503), kept by the HTTP protocol as connections open and close.

One book per server, used from its event loop only, so plain counters need no lock. An address
leaves the book when its last connection closes, so addresses that come and go cannot grow it.
Callers count by ``kbcore.addresses.client_address.address_key`` (IPv6 per /64, as the sign-in limits
count), worked out once per connection."""

from __future__ import annotations

from enum import Enum


class Full(Enum):
    """Why a connection was not admitted."""

    ALL = "all"  # the gateway holds as many connections as it may in all
    ADDRESS = "address"  # the client's address holds as many as one address may


class ConnectionBook:
    def __init__(self, total: int, per_address: int) -> None:
        """At most ``total`` connections open, and ``per_address`` from one address (0 = no bound)."""
        self.total = total
        self.per_address = per_address
        self.open = 0
        self._by_address: dict[str, int] = {}

    def admit(self, key: str) -> Full | None:
        """Count a new connection from the address ``key`` and return None, or say why it is
        refused (and count nothing). Every admitted connection must be released exactly once."""
        held = self._by_address.get(key, 0)
        if self.per_address and held >= self.per_address:
            return Full.ADDRESS
        if self.open >= self.total:
            return Full.ALL
        self._by_address[key] = held + 1
        self.open += 1
        return None

    def release(self, key: str) -> None:
        held = self._by_address.get(key, 0)
        if held <= 1:
            self._by_address.pop(key, None)
        else:
            self._by_address[key] = held - 1
        self.open = max(0, self.open - 1)

    def open_from(self, key: str) -> int:
        return self._by_address.get(key, 0)
