"""Lint: product code reaches other code only through its public API.

A private name (``_``-prefixed, not a dunder such as ``__version__``) is its owner's to change:
a library renames its private names in any release without notice, and a class's private
attributes are its invariants, kept by its own methods. Code that reaches them breaks on a minor
upgrade or a refactoring of the other side, and nothing warns it. Product code is ``kbcore``,
``services``, ``gateway``, ``cli`` and ``tools``; tests, benchmarks and the generated
``grpc_stubs`` are not checked.

What is flagged:

- ``import x._y``, ``from x._y import z`` and ``from x import _y`` of a third-party package (one
  that is none of the project's top-level packages, no relative import and not in the standard
  library);
- ``m._y`` (and ``m.a._y``) where ``m`` is a name an import of a third-party package bound;
- ``obj._y`` and ``getattr(obj, "_y")`` (``setattr``, ``hasattr``, ``delattr`` alike) on any
  object but the current class's own: ``self``, ``cls``, ``super()``, the class by its name, a
  parameter annotated as the class (or ``Self``), or a name the function bound to ``cls(...)``
  or ``TheClass(...)`` (an alternative constructor finishing the instance it built). So
  ``self._client._should_retry``, ``paragraph._p`` and ``other_store._client`` are flagged,
  whichever class or library the object belongs to; a module's own ``_helper`` functions and
  constants, used by their bare name, never are.

Underscored names that are documented public API are let through by ``PUBLIC_UNDERSCORE``, each
with its reason; everything else is flagged, the standard library's internals (``sys._getframe``)
included. A line ending in ``# private-ok: <why>`` is let through (a documented shim for an
upstream bug, say). Prints ``path:line what`` for each offender and exits 1 when there is any.

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
ALLOW_MARK = "# private-ok:"
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
# Underscored names that are public API, on any object (None) or on one module; why each is.
PUBLIC_UNDERSCORE: dict[tuple[str | None, str], str] = {
    (None, "_replace"): "namedtuple's documented API: the underscore only keeps it clear of field names",
    (None, "_asdict"): "namedtuple's documented API, as _replace",
    (None, "_fields"): "namedtuple's documented API, as _replace",
    (None, "_make"): "namedtuple's documented API, as _replace",
    (None, "_field_defaults"): "namedtuple's documented API, as _replace",
    ("os", "_exit"): "documented in the os module: leave a forked child without running cleanup",
}


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
    """Walks one file, knowing its third-party import names and, in a method, which names are its class's own."""

    def __init__(self) -> None:
        self.third_party_names: set[str] = set()
        self.classes: list[str] = []  # the enclosing classes' names, innermost last
        self.own: list[set[str]] = [set()]  # per enclosing function: names that are its class's own objects
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
            return
        if any(is_private(part) for part in module.split(".")):
            self.found.append((node.lineno, f"from {module} import ..."))
        for alias in node.names:
            if is_private(alias.name):
                self.found.append((node.lineno, f"from {module} import {alias.name}"))
            self.third_party_names.add(alias.asname or alias.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.own.append(set())  # a class body does not see the enclosing function's names
        self.generic_visit(node)
        self.own.pop()
        self.classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.own.append(self.own[-1] | _own_names(node, self.classes[-1] if self.classes else None))
        self.generic_visit(node)
        self.own.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root, chain = _chain(node)
        if root in self.third_party_names and any(is_private(part) for part in chain):
            self.found.append((node.lineno, f"{root}.{'.'.join(chain)}"))
        elif is_private(node.attr) and not self._may_reach(node.value, node.attr):
            self.found.append((node.lineno, ast.unparse(node)))
        else:
            self.generic_visit(node)  # a private part inside a longer chain is found further in

    def visit_Call(self, node: ast.Call) -> None:
        function, args = node.func, node.args
        if isinstance(function, ast.Name) and function.id in ATTRIBUTE_FUNCTIONS and len(args) >= 2:
            target, name = args[0], _private_constant(args[1])
            if name is not None and not self._may_reach(target, name):
                self.found.append((node.lineno, f"{function.id}({ast.unparse(target)}, {name!r})"))
        self.generic_visit(node)

    def _may_reach(self, receiver: ast.expr, name: str) -> bool:
        """Whether ``receiver.name`` is public API or the current class's own object."""
        root = _chain_root(receiver)
        if (None, name) in PUBLIC_UNDERSCORE or (ast.unparse(receiver), name) in PUBLIC_UNDERSCORE:
            return True
        if root in self.third_party_names:
            return False
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            return True
        own = {"self", "cls", *self.own[-1], *self.classes[-1:]}
        return isinstance(receiver, ast.Name) and receiver.id in own


def _own_names(function: ast.FunctionDef | ast.AsyncFunctionDef, owner: str | None) -> set[str]:
    """The names a method holds its own class's objects by: parameters annotated as the class
    (or ``Self``), and names it bound to ``cls(...)`` or ``Owner(...)``."""
    if owner is None:
        return set()
    makers = {"cls", owner}
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    names = {a.arg for a in arguments if _annotation_names(a.annotation) & {owner, "Self"}}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _chain_root(node.value.func) in makers:
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


def _private_constant(node: ast.expr) -> str | None:
    """The private name a string literal spells (``getattr(x, "_y")``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and is_private(node.value):
        return node.value
    return None


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


def _chain_root(node: ast.expr) -> str | None:
    """The plain name an attribute chain starts from (``a`` of ``a.b.c``); None for an expression."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


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
    # Imports first, wherever they are in the file, so a name is known before its first use.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            finder.visit(node)
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
        argv, offenders, lambda n: f"{n} use(s) of another class's or a library's private names: use its public API"
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
