"""Every gRPC port serves only the knowledge-base's own processes, and the entry guard runs on
every service: generated from the proto descriptors of the ``kb`` package, so a method or a field
added later is covered without a line here. On the real servers of the in-process stack (port
0), on the suite's database: SQLite, and PostgreSQL in the second pass.

Before: retrieval and context answered anyone who reached their port (``CreateDataset`` with no
credentials), and a NUL in a dataset name reached PostgreSQL and came back as a 500, because the
guard was installed on the chat service only.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import grpc_stubs
from kbcore.metrics.registry import REGISTRY
from kbcore.rpc.client import open_channel
from kbcore.rpc.credential_check import REFUSED
from kbcore.rpc.service_credential import METADATA_KEY
from tests.grpc_status import status_of
from tests.harness import Stack

NUL_TEXT = "名\x00字"
# Methods whose request holds no string at all: nothing to put a NUL into. Listed, so a string
# field added to one of them is noticed here.
NO_STRING_FIELDS = frozenset(
    {
        "kb.chat.v1.ApplicationService/ListApplications",
        "kb.chat.v1.AccessService/WhoAmI",
        "kb.chat.v1.UserService/SignOut",
        "kb.chat.v1.UserService/ListPersonalTokens",
        "kb.chat.v1.UserService/ListUsers",
        "kb.retrieval.v1.DatasetService/ListDatasets",
    }
)
Path_ = tuple[FieldDescriptor, ...]
CHAT_SERVICES = (
    "AnswerService",
    "ApplicationService",
    "AccessService",
    "OperationsService",
    "ModelService",
    "UserService",
)
RETRIEVAL_SERVICES = ("SearchService", "DatasetService", "DocumentService", "ParagraphService")


def kb_services() -> list[ServiceDescriptor]:
    """Every service the generated ``grpc_stubs`` package declares."""
    services = []
    for root in grpc_stubs.__path__:
        for module_file in sorted(Path(root).rglob("*_pb2.py")):
            parts = module_file.relative_to(root).with_suffix("").parts
            module = importlib.import_module(".".join(("grpc_stubs", *parts)))
            services.extend(module.DESCRIPTOR.services_by_name.values())
    return services


def targets(stack: Stack) -> dict[str, str]:
    """Each service's port in the stack; a service of the package without one fails the tests."""
    found = {
        **{f"kb.chat.v1.{name}": stack.chat_target for name in CHAT_SERVICES},
        "kb.context.v1.ContextService": stack.context_target,
        **{f"kb.retrieval.v1.{name}": stack.retrieval_target for name in RETRIEVAL_SERVICES},
    }
    assert {s.full_name for s in kb_services()} == set(found), "a generated service has no port here"
    return found


def methods() -> Iterator[tuple[ServiceDescriptor, MethodDescriptor]]:
    for service in kb_services():
        for method in service.methods:
            yield service, method


def string_paths(message: Any, prefix: Path_ = (), seen: frozenset[str] = frozenset()) -> Iterator[Path_]:
    """Every string field of ``message`` (a descriptor), nested messages and repeated fields
    included; a message type already on the path is not entered again."""
    for field in message.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            yield (*prefix, field)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            assert not field.message_type.GetOptions().map_entry, f"{field.full_name}: teach this test maps"
            if field.message_type.full_name not in seen:
                yield from string_paths(field.message_type, (*prefix, field), seen | {message.full_name})


def holding_nul(method: MethodDescriptor, path: Path_) -> Message:
    """The method's request with NUL text in the field at ``path`` and nothing else set."""
    request = GetMessageClass(method.input_type)()
    target = request
    for field in path[:-1]:
        child = getattr(target, field.name)
        target = child.add() if field.is_repeated else child
    last = path[-1]
    if last.is_repeated:
        getattr(target, last.name).append(NUL_TEXT)
    else:
        setattr(target, last.name, NUL_TEXT)
    return request


def call(
    channel: grpc.aio.Channel, service: ServiceDescriptor, method: MethodDescriptor, request: Message, **kwargs: Any
) -> Any:
    """The method called by name, unary or server-streaming as the descriptor says."""
    name = f"/{service.full_name}/{method.name}"
    reply = GetMessageClass(method.output_type)
    kind = channel.unary_stream if method.server_streaming else channel.unary_unary
    invoke = kind(name, request_serializer=type(request).SerializeToString, response_deserializer=reply.FromString)
    return invoke(request, timeout=30, **kwargs)


def first_nul_request(method: MethodDescriptor) -> Message:
    paths = list(string_paths(method.input_type))
    return holding_nul(method, paths[0]) if paths else GetMessageClass(method.input_type)()


async def test_every_method_of_every_service_refuses_a_caller_without_the_service_credential(stack: Stack) -> None:
    """No credential, or a wrong one: UNAUTHENTICATED with one sentence, before anything else is
    looked at (the request holds a NUL: the caller does not even learn that)."""
    ports = targets(stack)
    refused = []
    for service, method in methods():
        async with grpc.aio.insecure_channel(ports[service.full_name]) as channel:
            request = first_nul_request(method)
            for metadata in ((), ((METADATA_KEY, "not-the-credential"),), (("authorization", "Bearer x"),)):
                code, message = await status_of(call(channel, service, method, request, metadata=metadata))
                assert (code, message) == (grpc.StatusCode.UNAUTHENTICATED, str(REFUSED)), (
                    method.full_name,
                    code,
                    message,
                )
            refused.append(method.full_name)
    assert len(refused) >= 50, refused  # the three services' methods, all of them


async def test_every_string_field_of_every_method_refuses_nul_naming_it(stack: Stack) -> None:
    """With the credential (and no caller token: the guard runs before the chat service looks for
    one), a NUL in any string field is INVALID_ARGUMENT naming the field, never INTERNAL."""
    ports = targets(stack)
    without_strings, probed = set(), 0
    for service, method in methods():
        paths = list(string_paths(method.input_type))
        if not paths:
            without_strings.add(f"{service.full_name}/{method.name}")
            continue
        async with open_channel(ports[service.full_name], stack.credential) as channel:
            for path in paths:
                field = ".".join(f.name for f in path)
                code, message = await status_of(call(channel, service, method, holding_nul(method, path)))
                assert code == grpc.StatusCode.INVALID_ARGUMENT, (method.full_name, field, code, message)
                assert message == f"{field} must not contain NUL characters", (method.full_name, message)
                probed += 1
    assert without_strings == NO_STRING_FIELDS
    assert probed >= 150, probed


async def test_health_answers_without_the_credential_and_reflection_does_not(stack: Stack) -> None:
    """Container and supervisor health checks carry no secret; reflection describes the API, so
    it is for the deployment's own tools (with the credential) only."""
    for target in targets(stack).values():
        async with grpc.aio.insecure_channel(target) as bare:
            health = await health_pb2_grpc.HealthStub(bare).Check(health_pb2.HealthCheckRequest(), timeout=10)
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            listing = reflection_pb2.ServerReflectionRequest(list_services="")
            code, message = await status_of(
                reflection_pb2_grpc.ServerReflectionStub(bare).ServerReflectionInfo(iter([listing]))
            )
            assert (code, message) == (grpc.StatusCode.UNAUTHENTICATED, str(REFUSED))
        async with open_channel(target, stack.credential) as ours:
            replies = [
                r async for r in reflection_pb2_grpc.ServerReflectionStub(ours).ServerReflectionInfo(iter([listing]))
            ]
            assert replies[0].list_services_response.service, "reflection answers the deployment's own tools"


async def test_a_refused_call_is_counted_unauthenticated_under_its_method(stack: Stack) -> None:
    """The metrics stay outermost: an operator sees refused callers per method."""
    labels = {
        "grpc_service": "kb.retrieval.v1.DatasetService",
        "grpc_method": "CreateDataset",
        "grpc_code": "UNAUTHENTICATED",
    }
    before = REGISTRY.get_sample_value("kb_grpc_server_handled_total", labels) or 0.0
    service = next(s for s in kb_services() if s.full_name == labels["grpc_service"])
    method = service.methods_by_name["CreateDataset"]
    async with grpc.aio.insecure_channel(stack.retrieval_target) as bare:
        code, _ = await status_of(call(bare, service, method, GetMessageClass(method.input_type)(name="x")))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert (REGISTRY.get_sample_value("kb_grpc_server_handled_total", labels) or 0.0) == before + 1
