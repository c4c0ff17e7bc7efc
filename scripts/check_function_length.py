"""Lint: no function over 60 lines outside tests and bench.

A function counts from its ``def`` line to the last line of its body, so nested functions count
as part of the function that holds them (and are checked on their own as well). Decorators do
not count. Generated stubs (``grpc_stubs/``), the virtualenv, data, tests and benchmarks are skipped.
Prints ``path:line name N lines`` for each offender and exits 1 when there is any.

Usage: ``python scripts/check_function_length.py [ROOT]`` (ROOT defaults to the repository).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import tree_check

LIMIT = 60
SKIPPED = frozenset({"grpc_stubs", ".venv", "tests", "bench", "data"})

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def python_files(root: Path) -> Iterator[Path]:
    """The project's Python files, without the skipped top-level folders and hidden ones."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[0] in SKIPPED or any(part.startswith(".") for part in parts[:-1]):
            continue
        yield path


def functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, FunctionNode]]:
    """Every function and method under ``node``, named with its enclosing classes and functions."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, FunctionNode):
            name = f"{prefix}{child.name}"
            yield name, child
            yield from functions(child, f"{name}.")
        elif isinstance(child, ast.ClassDef):
            yield from functions(child, f"{prefix}{child.name}.")
        else:
            yield from functions(child, prefix)


def length(function: FunctionNode) -> int:
    """Lines from the ``def`` line to the end of the body (nested functions included)."""
    end = function.end_lineno if function.end_lineno is not None else function.lineno
    return end - function.lineno + 1


def offenders(root: Path) -> Iterator[str]:
    for path in python_files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, function in functions(tree):
            lines = length(function)
            if lines > LIMIT:
                yield f"{path.relative_to(root)}:{function.lineno} {name} {lines} lines"


def main(argv: list[str]) -> int:
    # run as a script, the checks import their sibling by its bare name, which mypy (run from
    # the repository) does not resolve: the annotation keeps the result typed.
    status: int = tree_check.run(
        argv, offenders, lambda n: f"{n} function(s) over {LIMIT} lines: split them into named steps"
    )
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
