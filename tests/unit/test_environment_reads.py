"""Every ``KB_*`` variable is read through ``kbcore.settings``: a read anywhere else would escape
its declaration, its range, its loud failure and the generated settings table. Passing
variables to a child process (``{**os.environ, "KB_…": …}``) is not a read and is allowed."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT_PACKAGES = ("kbcore", "services", "gateway", "cli", "tools")
SETTINGS_MODULE = REPO / "kbcore" / "settings.py"
READ_METHODS = {"get", "setdefault", "pop"}


def _is_environ(node: ast.expr) -> bool:
    """``os.environ`` or a bare ``environ`` (``from os import environ``)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def _is_getenv(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == "getenv" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "getenv"


def _names_kb_variable(node: ast.expr | None) -> bool:
    """A literal ``"KB_…"`` or an f-string starting with ``KB_``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.startswith("KB_")
    if isinstance(node, ast.JoinedStr) and node.values:
        return _names_kb_variable(node.values[0])
    return False


def _reads_kb_variable(node: ast.expr) -> bool:
    """``getenv("KB_…")``, ``environ.get/setdefault/pop("KB_…")``, ``environ["KB_…"]`` (not
    assigned to) or ``"KB_…" in environ``."""
    if isinstance(node, ast.Call):
        func = node.func
        reader = _is_getenv(func) or (
            isinstance(func, ast.Attribute) and func.attr in READ_METHODS and _is_environ(func.value)
        )
        return reader and bool(node.args) and _names_kb_variable(node.args[0])
    if isinstance(node, ast.Subscript):
        return isinstance(node.ctx, ast.Load) and _is_environ(node.value) and _names_kb_variable(node.slice)
    if isinstance(node, ast.Compare):
        membership = any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
        return membership and _names_kb_variable(node.left) and any(map(_is_environ, node.comparators))
    return False


def kb_reads(source: str) -> list[int]:
    """Line numbers where ``source`` reads a ``KB_*`` variable from the environment directly."""
    nodes = ast.walk(ast.parse(source))
    return sorted(node.lineno for node in nodes if isinstance(node, ast.expr) and _reads_kb_variable(node))


def product_modules() -> list[Path]:
    return [
        path
        for package in PRODUCT_PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path != SETTINGS_MODULE and ".venv" not in path.parts
    ]


@pytest.mark.parametrize(
    "source",
    [
        'import os\nos.environ.get("KB_RUN_DIR")',
        'import os\nos.environ["KB_TOKEN"]',
        'import os\nos.getenv("KB_HTTP_PORT", "8080")',
        'from os import environ\nenviron.setdefault("KB_DATA_DIR", "data")',
        'import os\nos.environ.get(f"KB_{os.name}_PORT")',
        'import os\n"KB_METRICS" in os.environ',
    ],
)
def test_the_check_sees_each_way_of_reading_a_variable(source: str) -> None:
    assert kb_reads(source) == [2]


@pytest.mark.parametrize(
    "source",
    [
        'import os\nenv = {**os.environ, "KB_RUN_DIR": "/tmp/run"}',
        'import os\nos.environ["KB_RUN_DIR"] = "/tmp/run"',
        'import os\nos.environ.get("HTTPS_PROXY")',
        '"""Reads ``os.environ.get("KB_RUN_DIR")`` nowhere: only in this sentence."""',
    ],
)
def test_passing_variables_on_and_other_variables_are_not_reads(source: str) -> None:
    assert kb_reads(source) == []


def test_product_code_reads_kb_variables_only_through_settings() -> None:
    modules = product_modules()
    assert len(modules) > 50, "the product packages were not found: the check would pass vacuously"
    offenders = [
        f"{path.relative_to(REPO)}:{line}" for path in modules for line in kb_reads(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "KB_* variables read outside kbcore/settings.py (declare a field there and read it from Settings): "
        + ", ".join(offenders)
    )
