"""Which peers' ``X-Forwarded-For`` and ``X-Forwarded-Proto`` the gateway believes:
``KB_TRUSTED_PROXIES``, read into the two uvicorn options that decide it.

The client address is what the per-address sign-in limit counts and what the loopback rule
looks at (docs/operations.md, "Behind a reverse proxy"), so a header that any caller could set
must not move it. uvicorn, left to itself, rewrites the client from those headers for peers in
``FORWARDED_ALLOW_IPS`` (default 127.0.0.1): any process on the gateway's host could claim any
address. Here the headers are read only when the setting names proxies, and then only from
them; uvicorn's environment variable is never consulted. ``X-Forwarded-Host`` is never read
(neither uvicorn nor the gateway look at it): the ``Host`` the proxy sends is what the host
rules judge.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kbcore.settings import SettingsError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAPPED_PREFIX = 96  # ::ffff:0:0/96 holds the IPv4-mapped IPv6 addresses


def _network(entry: str) -> Network:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        pass
    if entry == "*":
        reason = "'*' would let every caller choose its own address; name the proxies"
    else:
        reason = f"{entry!r} is not an IP address or a network such as 10.0.0.0/8"
    raise SettingsError(f"KB_TRUSTED_PROXIES: {reason} (a comma-separated list of the reverse proxies' addresses)")


def _with_mapped(network: Network) -> list[Network]:
    """An IPv4 proxy also as the IPv4-mapped IPv6 peer a dual-stack listener (``KB_HTTP_HOST=::``)
    sees it as, so one setting holds whichever way the gateway listens."""
    if isinstance(network, ipaddress.IPv6Network):
        return [network]
    mapped = ipaddress.IPv6Network(f"::ffff:{network.network_address}/{MAPPED_PREFIX + network.prefixlen}")
    return [network, mapped]


def trusted_proxies(setting: str) -> list[str]:
    """The setting's addresses and networks, normalised (``10.1.2.3/8`` → ``10.0.0.0/8``, as
    uvicorn would otherwise read it as a name and trust nothing); [] for an empty setting.
    An entry that is neither stops the start with a sentence naming it."""
    entries = [entry.strip() for entry in setting.split(",") if entry.strip()]
    networks = [mapped for entry in entries for mapped in _with_mapped(_network(entry))]
    return [str(network.network_address) if network.num_addresses == 1 else str(network) for network in networks]


def proxy_options(setting: str) -> dict[str, Any]:
    """``uvicorn.Config``'s proxy arguments: the headers read from these peers only, or not at all."""
    trusted = trusted_proxies(setting)
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": trusted}
