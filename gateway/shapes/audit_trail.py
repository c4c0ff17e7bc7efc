"""Shapes of the audit trail (docs/access.md): one state-changing action per event, newest
first, in MaxKB's page shape."""

from __future__ import annotations

from gateway.shapes.envelope import Shape


class AuditEventOut(Shape):
    id: str
    time: str
    actor_kind: str  # user, operator, application, visitor, service
    actor: str
    client_address: str
    action: str
    object_kind: str
    object_id: str
    object_name: str
    detail: str


class AuditPageOut(Shape):
    records: list[AuditEventOut]
    total: int
    current: int
    size: int
