"""Who may call the retrieval service: the permission check for calls made on a person's behalf.

The gateway resolves who is calling and passes the principal in ``kb-caller-bin``
(``kbcore.permissions.wire``). This interceptor checks each such call against the one table of
what every RPC needs (``kbcore.permissions.table``), reading the datasets a call is about from its
request, and refuses with PERMISSION_DENIED and a sentence saying why (docs/access.md, People and
roles). A call without the metadata is one of the deployment's own processes (the chat service
searching for an answer, the demo seeder) and goes on unchecked: the port serves only holders of
the service credential.

Servicers read the principal with ``current_principal()``: ListDatasets shows a person only the
datasets granted to them, and CreateDataset grants the new one to its creator. The same call
acts for that person in the audit trail (``kbcore.db.audit.acting``, with the client address
the gateway sent); the deployment's own calls keep the actor ``service`` (docs/access.md).
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any

import grpc

from kbcore.db.audit import Actor, acting, actor_of
from kbcore.errors import PermissionDenied
from kbcore.permissions.check import first_refused, objects_named, refusal_text
from kbcore.permissions.roles import Principal
from kbcore.permissions.table import Requirement, requirements_for_rpc
from kbcore.permissions.wire import address_in, principal_in
from kbcore.rpc.credential_check import OPEN_PREFIXES
from kbcore.rpc.error_mapping import abort_for
from kbcore.rpc.handlers import CallMetadata, MethodInterceptor, holding, refusing, scoped
from kbcore.words.said import said

UNLISTED = said("method_not_open_accounts_permission_table")

_PRINCIPAL: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("retrieval_principal", default=None)


def current_principal() -> Principal | None:
    """The principal the call being served acts for; None for the deployment's own processes."""
    return _PRINCIPAL.get()


class CallerCheck(MethodInterceptor):
    """Checks every call that carries a principal against ``RPCS`` before its method runs, and
    keeps the principal for the method. Health checks stay open, as the credential check keeps
    them; any other method the table does not list is refused to a principal."""

    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        if method.startswith(OPEN_PREFIXES):
            return handler
        principal = principal_in(metadata)
        if principal is None:
            return handler
        requirements = requirements_for_rpc(method)
        if requirements is None:
            return refusing(handler, _refuse)
        call = _Call(method, principal, requirements, actor_of(principal, address_in(metadata)))
        return scoped(handler, call.enter)


@dataclass(frozen=True)
class _Call:
    """What the interceptor resolved for one call: checked before, and acted as during, its method."""

    method: str
    principal: Principal
    requirements: tuple[Requirement, ...]
    actor: Actor

    async def enter(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> contextlib.ExitStack:
        """Refuses the call unless the principal meets its requirements; else the scope that
        holds the principal and acts as it."""
        refused = first_refused(self.principal, self.requirements, objects_named(request, self.requirements))
        if refused is not None:
            await abort_for(context, self.method, PermissionDenied(refusal_text(self.principal, refused)))
        scope = contextlib.ExitStack()
        scope.enter_context(holding(_PRINCIPAL, self.principal))
        scope.enter_context(acting(self.actor))
        return scope


async def _refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    await abort_for(context, "the permission check", PermissionDenied(UNLISTED))
