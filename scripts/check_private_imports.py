"""Lint: product code calls third-party libraries through their public API only.

A library's private names (``_``-prefixed) change in any release without notice, so code that
reaches them breaks on a minor upgrade. Product code is ``kbcore``, ``services``, ``gateway``,
``cli`` and ``tools``; tests, benchmarks and the generated ``grpc_stubs`` are not checked. A
module is third-party unless it is one of the project's top-level packages, a relative import,
or in the standard library (whose ``_``-names, such as ``os._exit``, are documented API).

What is flagged (a "private" name starts with ``_`` and is not a dunder such as ``__version__``):

- ``import x._y`` and ``from x._y import z``: a private module of a third-party package;
- ``from x import _y``: a private name of one;
- ``m._y`` (and ``m.a._y``, ``getattr(m, "_y")``) where ``m`` is a name an import of a
  third-party package bound in the same file, module or object alike (``openai._models``,
  ``httpx2.Client._send``);
- ``obj._y`` for the private attributes of third-party clients known to have been reached
  for (``_client``, ``_should_retry``, ``_transport``… in ``CLIENT_PRIVATES``) on any object
  but ``self`` or ``cls`` themselves (``self._client._should_retry`` is flagged): what an
  object holds is unknown to a syntax check, but these names on someone else's object are a
  client's insides. A parameter annotated with one of the project's own classes (imported from
  a first-party module or defined in the file) is taken at its word and let through.

Prints ``path:line what`` for each offender and exits 1 when there is any. A line ending in
``# private-ok: <why>`` is let through (a documented shim for an upstream bug, say).

Usage: ``python scripts/check_private_imports.py [ROOT]`` (ROOT defaults to the repository).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import tree_check

CHECKED = ("kbcore", "services", "gateway", "cli", "tools")
FIRST_PARTY = frozenset({*CHECKED, "grpc_stubs", "tests", "bench", "scripts"})
# Private attributes of the HTTP and model clients we use that code has reached into before.
CLIENT_PRIVATES = frozenset(
    {
        "_client",
        "_should_retry",
        "_make_status_error_from_response",
        "_calculate_retry_timeout",
        "_transport",
        "_transport_for_url",
        "_build_redirect_request",
        "_send_single_request",
        "_pool",
        "_session",
        "_connector",
    }
)
ALLOW_MARK = "# private-ok:"


def python_files(root: Path) -> Iterator[Path]:
    for top in CHECKED:
        for path in sorted((root / top).rglob("*.py")):
            if not any(part.startswith(".") for part in path.relative_to(root).parts[:-1]):
                yield path


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_third_party(module: str) -> bool:
    top = module.split(".")[0]
    return bool(top) and top not in FIRST_PARTY and top not in sys.stdlib_module_names


class _Finder(ast.NodeVisitor):
    """Walks one file, knowing which names its imports of third-party packages bound."""

    def __init__(self) -> None:
        self.third_party_names: set[str] = set()
        self.own_types: set[str] = set()  # classes of the project: defined here or imported from it
        self.own_objects: list[set[str]] = [set()]  # per enclosing function: parameters of those types
        self.found: list[tuple[int, str]] = []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not is_third_party(alias.name):
                continue
            if any(is_private(part) for part in alias.name.split(".")):
                self.found.append((node.lineno, f"import {alias.name}"))
            self.third_party_names.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not is_third_party(module):
            if node.level or module.split(".")[0] in FIRST_PARTY:
                self.own_types.update(alias.asname or alias.name for alias in node.names)
            return
        if any(is_private(part) for part in module.split(".")):
            self.found.append((node.lineno, f"from {module} import ..."))
        for alias in node.names:
            if is_private(alias.name):
                self.found.append((node.lineno, f"from {module} import {alias.name}"))
            self.third_party_names.add(alias.asname or alias.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.own_types.add(node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        own = {a.arg for a in arguments if _annotation_names(a.annotation) & self.own_types}
        self.own_objects.append(own)
        self.generic_visit(node)
        self.own_objects.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root, chain = _chain(node)
        receiver = node.value.id if isinstance(node.value, ast.Name) else None
        if root in self.third_party_names and any(is_private(part) for part in chain):
            self.found.append((node.lineno, f"{root}.{'.'.join(chain)}"))
        elif node.attr in CLIENT_PRIVATES and receiver not in ("self", "cls", *self.own_objects[-1]):
            self.found.append((node.lineno, f"{root or '<expression>'}.{'.'.join(chain)}"))
        else:
            self.generic_visit(node)  # a private part inside a longer chain is found further in

    def visit_Call(self, node: ast.Call) -> None:
        function, args = node.func, node.args
        if isinstance(function, ast.Name) and function.id == "getattr" and len(args) >= 2:
            target, name = args[0], args[1]
            if (
                isinstance(target, ast.Name)
                and target.id in self.third_party_names
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and is_private(name.value)
            ):
                self.found.append((node.lineno, f"getattr({target.id}, {name.value!r})"))
        self.generic_visit(node)


def _annotation_names(annotation: ast.expr | None) -> set[str]:
    """The plain names an annotation mentions (``Store``, ``Store | None``, ``"Store"``)."""
    if annotation is None:
        return set()
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return set()
    return {node.id for node in ast.walk(annotation) if isinstance(node, ast.Name)}


def _chain(node: ast.Attribute) -> tuple[str | None, list[str]]:
    """``a.b.c`` as ("a", ["b", "c"]); the root is None when it is not a plain name."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    return (current.id if isinstance(current, ast.Name) else None), parts[::-1]


def offenders_in(path: Path, root: Path) -> Iterator[str]:
    source = path.read_text(encoding="utf-8")
    finder = _Finder()
    tree = ast.parse(source, filename=str(path))
    # Imports and classes first, wherever they are in the file, so a name is known before its first use.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            finder.visit(node)
        elif isinstance(node, ast.ClassDef):
            finder.own_types.add(node.name)
    import_hits, finder.found = finder.found, []
    finder.visit(tree)
    lines = source.splitlines()
    hits = sorted({*import_hits, *finder.found})
    for line, what in hits:
        if ALLOW_MARK not in lines[line - 1]:
            yield f"{path.relative_to(root)}:{line} {what}"


def offenders(root: Path) -> Iterator[str]:
    for path in python_files(root):
        yield from offenders_in(path, root)


def main(argv: list[str]) -> int:
    # run as a script, the checks import their sibling by its bare name, which mypy (run from
    # the repository) does not resolve: the annotation keeps the result typed.
    status: int = tree_check.run(
        argv, offenders, lambda n: f"{n} use(s) of a library's private names: use its public API"
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
