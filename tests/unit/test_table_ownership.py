"""Each service touches only its own tables and the cross-service uses ``kbcore.db.ownership``
declares. A service "touches" a table when its code, or the kbcore code it imports, names the
table's mapped class or Table object from ``kbcore.db.tables`` or writes SQL naming the table."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Table

import kbcore.db.tables as tables
from kbcore.db.ownership import CROSS_SERVICE_USES, OWNERS

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("chat", "context", "retrieval")
TABLES_MODULE = "kbcore.db.tables"
# Not imported by any service at run time: the schema's history, and this declaration itself.
NOT_SCANNED = ("kbcore.db.migrations", "kbcore.db.ownership")
SQL_TABLE = re.compile(r"\b(?:from|join|update|into|table)\s+[\"'`]?(\w+)", re.IGNORECASE)


def _table_names_by_symbol() -> dict[str, str]:
    """Every name ``kbcore.db.tables`` exports that stands for a table: a mapped class or a Table."""
    found = {name: value.name for name, value in vars(tables).items() if isinstance(value, Table)}
    for mapper in tables.Base.registry.mappers:
        table = mapper.local_table
        assert isinstance(table, Table)
        found[mapper.class_.__name__] = table.name
    return found


SYMBOLS = _table_names_by_symbol()
TABLE_NAMES = frozenset(SYMBOLS.values())


@dataclass
class Module:
    touched: dict[str, int] = field(default_factory=dict)  # table -> first line
    imports: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring nodes: prose that mentions "the chat" is not SQL."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _read(path: Path, known: set[str]) -> Module:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = Module()
    aliases = set()  # names the tables module itself is bound to
    prose = _docstrings(tree)

    def touch(table: str, node: ast.AST) -> None:
        module.touched.setdefault(table, getattr(node, "lineno", 0))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                module.imports.add(full if full in known else node.module)
                if node.module == TABLES_MODULE and alias.name in SYMBOLS:
                    touch(SYMBOLS[alias.name], node)
                if full == TABLES_MODULE:
                    aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.imports.add(alias.name)
                if alias.name == TABLES_MODULE:
                    aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Attribute) and node.attr in SYMBOLS and ast.unparse(node.value) in aliases:
            touch(SYMBOLS[node.attr], node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            for name in SQL_TABLE.findall(node.value):
                if name.lower() in TABLE_NAMES:
                    touch(name.lower(), node)
    return module


def _product_modules() -> dict[str, Path]:
    paths = [*(ROOT / "kbcore").rglob("*.py"), *(ROOT / "services").rglob("*.py")]
    named = {_module_name(path): path for path in paths}
    return {
        name: path
        for name, path in named.items()
        if name != TABLES_MODULE and not any(name == n or name.startswith(n + ".") for n in NOT_SCANNED)
    }


PATHS = _product_modules()
MODULES = {name: _read(path, set(PATHS)) for name, path in PATHS.items()}


def _reached(service: str) -> set[str]:
    """The service's modules and the kbcore modules they import, directly or not."""
    own = f"services.{service}"
    todo = [name for name in MODULES if name == own or name.startswith(own + ".")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(i for i in MODULES[name].imports if i in MODULES and i.startswith(("kbcore.", own)))
    return seen


def _touches(service: str) -> Iterator[tuple[str, str, int]]:
    """(table, module, line) for every table the service's code reaches."""
    for name in sorted(_reached(service)):
        for table, line in MODULES[name].touched.items():
            yield table, name, line


def _allowed(service: str) -> set[str]:
    own = {table for table, owner in OWNERS.items() if owner == service}
    return own | {use.table for use in CROSS_SERVICE_USES if use.service == service}


def test_every_table_has_one_owning_service() -> None:
    assert set(OWNERS) == set(tables.Base.metadata.tables)
    assert set(OWNERS.values()) <= set(SERVICES)


def test_each_cross_service_use_names_another_services_table_once_with_a_reason() -> None:
    pairs = [(use.service, use.table) for use in CROSS_SERVICE_USES]
    assert len(pairs) == len(set(pairs))
    for use in CROSS_SERVICE_USES:
        assert use.service in SERVICES and use.table in OWNERS, use
        assert OWNERS[use.table] != use.service, f"{use.service} owns {use.table}: no exception needed"
        assert use.reason.strip(), use


def test_the_scan_sees_the_tables_a_service_is_known_to_use() -> None:
    """The scanner itself: the ORM import, the Table alias and the lease's SQL are all found."""
    assert "chat_record" in {t for t, _, _ in _touches("context")}  # RECORD_TABLE, a Table alias
    assert "chat_lock" in {t for t, m, _ in _touches("context") if m == "kbcore.db.lease"}
    assert "dataset" in {t for t, _, _ in _touches("retrieval")}


def test_no_service_touches_a_table_it_neither_owns_nor_is_allowed_to_use() -> None:
    strays = [
        f"{service}: {module} (line {line}) touches {table}, owned by {OWNERS.get(table, 'nobody')}"
        for service in SERVICES
        for table, module, line in _touches(service)
        if table not in _allowed(service)
    ]
    assert not strays, "declare the use in kbcore/db/ownership.py with its reason, or ask the owner over RPC:\n" + (
        "\n".join(strays)
    )


def test_every_declared_cross_service_use_is_still_made() -> None:
    """An exception nobody needs any more is removed, so the list stays the truth."""
    stale = [
        f"{use.service} -> {use.table}"
        for use in CROSS_SERVICE_USES
        if use.table not in {t for t, _, _ in _touches(use.service)}
    ]
    assert not stale, stale
