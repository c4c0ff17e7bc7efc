"""The key a per-address limit counts a client under: one for each IPv4 address, one for each
IPv6 /64 (the block one host or household is usually given, so a host cannot take a fresh
address for every attempt), an IPv4-mapped IPv6 address as its IPv4 address.

The gateway counts visitor and password sign-ins per address in its memory
(``gateway.signin_limit``) and the chat service failed password sign-ins in the database
(``services.chat.accounts.signin_throttle``): both count an address under the same key.
"""

from __future__ import annotations

import ipaddress

IPV6_BLOCK = 64


def address_key(address: str) -> str:
    """The IPv4 address, or the IPv6 /64 it is in; anything else (no address: "") as it is."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.IPv6Network(f"{parsed}/{IPV6_BLOCK}", strict=False))
