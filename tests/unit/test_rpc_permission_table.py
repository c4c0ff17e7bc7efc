"""Every RPC the chat and retrieval services serve has its line in the permission table, and
every line names an object field its request really has: a new RPC cannot be open by omission,
and a requirement cannot check a field that is never there (and so never refuses anything).
The context service is left out: only the chat service calls it, for itself."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.protobuf.descriptor import Descriptor, MethodDescriptor

from grpc_stubs.chat.v1 import chat_service_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2
from kbcore.permissions.roles import Need
from kbcore.permissions.table import RPCS
from services.chat.server import PUBLIC_METHODS

SERVED = (chat_service_pb2, retrieval_service_pb2)


def methods() -> Iterator[tuple[str, MethodDescriptor]]:
    for module in SERVED:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                yield f"{service.full_name}/{method.name}", method


def has_field(message: Descriptor | None, path: str) -> bool:
    """Whether ``path`` (``application_id``, or ``application.id`` into a message field) exists."""
    head, _, rest = path.partition(".")
    field = message.fields_by_name.get(head) if message is not None else None
    if field is None:
        return False
    return has_field(field.message_type, rest) if rest else field.message_type is None


ALL = dict(methods())


def test_the_protos_serve_rpcs_at_all() -> None:
    assert len(ALL) > 40 and "kb.chat.v1.UserService/SignIn" in ALL


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_rpc_is_in_the_table(name: str) -> None:
    assert name in RPCS, f"{name} is missing from kbcore.permissions.table.RPCS"


def test_the_table_names_no_rpc_that_does_not_exist() -> None:
    assert sorted(set(RPCS) - set(ALL)) == []


@pytest.mark.parametrize("name", sorted(RPCS))
def test_each_requirement_names_a_field_of_its_request(name: str) -> None:
    method = ALL[name]
    for requirement in RPCS[name]:
        if requirement.object_from:
            assert has_field(method.input_type, requirement.object_from), (
                f"{name}: {method.input_type.full_name} has no field {requirement.object_from!r}"
            )


def test_the_chat_services_public_methods_are_exactly_the_tables_public_ones() -> None:
    public = {
        name.rsplit("/", 1)[1]
        for name, requirements in RPCS.items()
        if name.startswith("kb.chat.v1.") and any(r.need is Need.PUBLIC for r in requirements)
    }
    assert public == set(PUBLIC_METHODS)
