"""The PostgreSQL database one part of the suite runs on, created when missing: its URL on stdout.

`make test` runs parts of the PostgreSQL pass at the same time (scripts/run_suite.sh), and each
part's session starts by emptying its database's schema (tests/conftest.py), so two parts cannot
share one. The first part keeps the database it was given (``test``); another gets a sibling
named after it (``test_e2e``), on the same server, with the same credentials.

    python scripts/suite_database.py postgresql://postgres@127.0.0.1:5432/test e2e
"""

from __future__ import annotations

import re
import sys

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

_NAME = re.compile(r"^[a-z0-9_]+$")


def sibling_database(url: str, suffix: str) -> str:
    """``url`` with its database named ``<database>_<suffix>``, which exists afterwards."""
    given = make_url(url)
    name = f"{given.database}_{suffix}"
    if not _NAME.match(name):
        raise SystemExit(f"not a database name this script creates: {name!r}")
    server = create_engine(given.set(drivername="postgresql+psycopg", database="postgres"))
    with server.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        found = connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name})
        if not found:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    server.dispose()
    return given.set(database=name).render_as_string(hide_password=False)


if __name__ == "__main__":
    sys.stdout.write(sibling_database(sys.argv[1], sys.argv[2]) + "\n")
