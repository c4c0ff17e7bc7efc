"""The code's shape stays readable as it grows: services and their servicers stay small enough to
hold in mind, a package's root shows its parts at a glance, and a module's file name says which
one it is without its folder."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from google.protobuf.descriptor import FileDescriptor

from grpc_stubs.chat.v1 import chat_service_pb2
from grpc_stubs.context.v1 import context_service_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("kbcore", "services", "gateway", "cli", "tools")
PROTO_FILES: tuple[FileDescriptor, ...] = (
    chat_service_pb2.DESCRIPTOR,
    context_service_pb2.DESCRIPTOR,
    retrieval_service_pb2.DESCRIPTOR,
)
MAX_RPCS = 12
MAX_ROOT_MODULES = 15
MAX_NAME_USES = 2
# A service's entry points share their names on purpose; package files are not modules of their own.
SHARED_NAMES = frozenset({"server.py", "__init__.py", "__main__.py"})


def _product_files() -> list[Path]:
    # Migrations are the schema's history, named by revision, not modules anyone imports.
    return [
        path
        for top in PRODUCT
        for path in (ROOT / top).rglob("*.py")
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def _servicer_classes() -> list[tuple[str, int, int]]:
    """(class, base count, RPC count) for each class built on a generated ``…Servicer`` base:
    its RPCs are its methods named like RPCs (CamelCase)."""
    found = []
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Servicer") for b in node.bases):
                rpcs = [
                    item.name
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name[:1].isupper()
                ]
                found.append((f"{path.relative_to(ROOT)}:{node.name}", len(node.bases), len(rpcs)))
    return found


def test_no_proto_service_has_more_than_twelve_rpcs() -> None:
    sizes = {
        service.full_name: len(service.methods) for file in PROTO_FILES for service in file.services_by_name.values()
    }
    assert len(sizes) >= 10  # every service of the three files is seen
    assert {name: size for name, size in sizes.items() if size > MAX_RPCS} == {}


def test_each_servicer_class_serves_one_service_of_at_most_twelve_rpcs() -> None:
    classes = _servicer_classes()
    assert len(classes) >= 10  # one per proto service
    assert {name: size for name, _, size in classes if size > MAX_RPCS} == {}
    # One base, the generated one: no mixins sharing attributes behind each other's backs.
    assert {name: bases for name, bases, _ in classes if bases != 1} == {}


def test_no_product_package_has_more_than_fifteen_modules_at_its_root() -> None:
    packages = {path.parent for path in _product_files() if path.name == "__init__.py"}
    crowded = {}
    for package in packages:
        modules = [p for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
        if len(modules) > MAX_ROOT_MODULES:
            crowded[str(package.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def test_no_module_file_name_is_used_three_times_in_product_code() -> None:
    uses = Counter(path.name for path in _product_files() if path.name not in SHARED_NAMES)
    repeated = {
        name: sorted(str(p.relative_to(ROOT)) for p in _product_files() if p.name == name)
        for name, count in uses.items()
        if count > MAX_NAME_USES
    }
    assert repeated == {}
