#!/usr/bin/env bash
# The README's test command: the whole suite on SQLite and, when KB_TEST_DATABASE_URL names a
# PostgreSQL database, again on it (the tests that open no suite database are left out there:
# they are marked own_database). The two passes share nothing (each its own data folder,
# ephemeral ports, its own database), so they run at the same time, one a core: CI's time is the
# slower pass rather than the sum. The PostgreSQL pass's output follows the SQLite pass's, whole.
# Each pass writes where its time went to tests/durations/ (tests/durations_record.py).
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
REPORT=(-q --durations=12)

postgres_pid=""
if [ -n "${KB_TEST_DATABASE_URL:-}" ]; then
  postgres_log="$(mktemp)"
  trap 'rm -f "$postgres_log"' EXIT
  trap 'kill "$postgres_pid" 2>/dev/null; exit 130' INT TERM
  KB_DATABASE_URL="$KB_TEST_DATABASE_URL" KB_DURATIONS_RECORD=tests/durations/postgresql.txt \
    "$PY" -m pytest "${REPORT[@]}" -m "not own_database" >"$postgres_log" 2>&1 &
  postgres_pid=$!
fi

echo "== the suite on SQLite =="
KB_DURATIONS_RECORD=tests/durations/sqlite.txt "$PY" -m pytest "${REPORT[@]}"
sqlite_status=$?

postgres_status=0
if [ -n "$postgres_pid" ]; then
  wait "$postgres_pid"
  postgres_status=$?
  echo "== the suite again on $KB_TEST_DATABASE_URL =="
  cat "$postgres_log"
fi

if [ "$sqlite_status" -ne 0 ] || [ "$postgres_status" -ne 0 ]; then
  echo "the suite failed: SQLite pass exit $sqlite_status, PostgreSQL pass exit $postgres_status" >&2
  exit 1
fi
