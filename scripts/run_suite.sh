#!/usr/bin/env bash
# The README's test command: the whole suite on SQLite and, when KB_TEST_DATABASE_URL names a
# PostgreSQL database, again on it. The tests marked own_database open none of the suite's
# database, so they run once, in either pass: each of their files goes to the pass the durations
# records predict will end sooner (tests/suite_split.py), both passes dealing them from the same
# copy of the records taken here. Each pass writes where its time went to tests/durations/
# (tests/durations_record.py): wall time, outcomes, each test file's seconds and CPU seconds.
#
# The two passes run at the same time and share the two cores (docs/development.md). They share
# nothing that either writes: each its own database (a
# SQLite file in its own temporary folder; the PostgreSQL database, which the SQLite pass leaves
# alone when KB_TEST_DATABASE_URL is set), ports chosen by the system and held, its own browser
# screenshots (test-artifacts/<database>/) and its own pytest cache. The PostgreSQL pass's
# output is printed whole after the SQLite pass's.
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
REPORT=(-q --durations=12)
# Where the environment says not to write bytecode (as container images often do), pytest
# rewrote the asserts of all 230 test modules on every run (collection: 15 s of CPU instead of 10)
# and each of the suite's service processes compiled the project again. The compiled files go to
# the git-ignored __pycache__ folders, each written atomically, so both passes may write at once.
unset PYTHONDONTWRITEBYTECODE

postgres_pid=""
sqlite_pass=""  # which pass the SQLite one is when there are two
if [ -n "${KB_TEST_DATABASE_URL:-}" ]; then
  postgres_log="$(mktemp)"
  records="$(mktemp -d)"
  cp tests/durations/*.txt "$records/" 2>/dev/null || true
  trap 'rm -rf "$postgres_log" "$records"' EXIT
  trap '[ -n "$postgres_pid" ] && kill "$postgres_pid" 2>/dev/null; exit 130' INT TERM
  export KB_SUITE_RECORDS="$records"
  sqlite_pass=sqlite
  KB_SUITE_PASS=postgresql KB_DATABASE_URL="$KB_TEST_DATABASE_URL" KB_DURATIONS_RECORD=tests/durations/postgresql.txt \
    "$PY" -m pytest "${REPORT[@]}" -o cache_dir=.pytest_cache/postgresql >"$postgres_log" 2>&1 &
  postgres_pid=$!
  echo "== the suite on PostgreSQL ($KB_TEST_DATABASE_URL) runs beside this one; its output follows =="
fi

echo "== the suite on SQLite =="
KB_SUITE_PASS="$sqlite_pass" KB_DURATIONS_RECORD=tests/durations/sqlite.txt "$PY" -m pytest "${REPORT[@]}"
sqlite_status=$?

postgres_status=0
if [ -n "$postgres_pid" ]; then
  wait "$postgres_pid"
  postgres_status=$?
  echo "== the suite on PostgreSQL ($KB_TEST_DATABASE_URL) =="
  cat "$postgres_log"
fi

if [ "$sqlite_status" -ne 0 ] || [ "$postgres_status" -ne 0 ]; then
  echo "the suite failed: SQLite pass exit $sqlite_status, PostgreSQL pass exit $postgres_status" >&2
  exit 1
fi
