"""A principal as call metadata, for the services that do not resolve credentials themselves.

The gateway resolves who is calling (through the chat service, which owns users) and passes the
result to the retrieval service in ``kb-caller-bin``. The retrieval service believes it because
its port serves only callers with the service credential (``kbcore.rpc.guard``): the gateway and
the other services. A call without it comes from one of the deployment's own processes acting
for itself (the chat service searching for an answer, the demo seeder) and is not limited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from kbcore.permissions.roles import Kind, Principal, Role

METADATA_KEY = "kb-caller-bin"  # "-bin": gRPC carries the value as bytes (usernames need not be ASCII)


def principal_metadata(principal: Principal) -> tuple[tuple[str, bytes], ...]:
    """Call metadata that carries ``principal``."""
    body = {
        "kind": principal.kind.value,
        "role": principal.role.value if principal.role else "",
        "user_id": principal.user_id,
        "username": principal.username,
        "application_id": principal.application_id,
        "datasets": sorted(principal.datasets),
        "applications": sorted(principal.applications),
    }
    return ((METADATA_KEY, json.dumps(body, ensure_ascii=False).encode()),)


def principal_in(metadata: Iterable[tuple[str, str | bytes]] | None) -> Principal | None:
    """The principal a call carries, or None when it carries none (one of our own processes).
    A value that is not one we wrote names nobody: it is read as anonymous, never as more."""
    for key, value in metadata or ():
        if key == METADATA_KEY:
            return _decoded(value)
    return None


def _decoded(value: str | bytes) -> Principal:
    try:
        body = json.loads(value)
        role = body.get("role") or ""
        return Principal(
            kind=Kind(body["kind"]),
            role=Role(role) if role else None,
            user_id=str(body.get("user_id", "")),
            username=str(body.get("username", "")),
            application_id=str(body.get("application_id", "")),
            datasets=frozenset(str(d) for d in body.get("datasets", ())),
            applications=frozenset(str(a) for a in body.get("applications", ())),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return Principal(Kind.ANONYMOUS)


ADDRESS_KEY = "kb-client-address"


def address_metadata(address: str) -> tuple[tuple[str, str], ...]:
    """Call metadata that carries the client's address as the gateway determined it (trusted
    proxies applied), for the audit trail. Nothing when the address is unknown."""
    return ((ADDRESS_KEY, address),) if address else ()


def address_in(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The client address a call carries ("" for none), at most 64 characters as stored."""
    for key, value in metadata or ():
        if key == ADDRESS_KEY and isinstance(value, str):
            return value[:64]
    return ""
