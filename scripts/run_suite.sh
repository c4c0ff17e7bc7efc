#!/usr/bin/env bash
# The README's test command: the whole suite on SQLite and, when KB_TEST_DATABASE_URL names a
# PostgreSQL database, again on it (the tests that open no suite database are left out there:
# they are marked own_database). Each database's suite runs as two parts, the end-to-end tests
# and the rest, and all parts run at the same time: they share nothing (each its own data
# folder, ephemeral ports, SQLite files, and on PostgreSQL its own database: the e2e part a
# sibling of the given one, scripts/suite_database.py), and much of a test's time is spent
# waiting on processes it started, so parallel parts keep both cores busy where one after the
# other left them idle. Each part's output is printed whole, in order, once all have ended, and
# each writes where its time went to tests/durations/ (tests/durations_record.py).
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
REPORT=(-q --durations=12)

names=() pids=() logs=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  rm -f "${logs[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() {  # start LABEL DATABASE_URL ("" for SQLite) PYTEST_ARGUMENTS...
  local label="$1" url="$2" log
  shift 2
  log="$(mktemp)"
  env ${url:+KB_DATABASE_URL="$url"} KB_DURATIONS_RECORD="tests/durations/${label// /-}.txt" \
    "$PY" -m pytest "${REPORT[@]}" "$@" >"$log" 2>&1 &
  names+=("$label") pids+=("$!") logs+=("$log")
}

start "sqlite e2e" "" tests/e2e
start "sqlite rest" "" tests --ignore=tests/e2e
if [ -n "${KB_TEST_DATABASE_URL:-}" ]; then
  e2e_url="$("$PY" scripts/suite_database.py "$KB_TEST_DATABASE_URL" e2e)" || exit 1
  start "postgresql e2e" "$e2e_url" tests/e2e -m "not own_database"
  start "postgresql rest" "$KB_TEST_DATABASE_URL" tests --ignore=tests/e2e -m "not own_database"
fi

failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  status=$?
  echo "== ${names[$i]} =="
  cat "${logs[$i]}"
  # 5: no test collected, as in a part whose tests all run on SQLite only.
  [ "$status" -eq 0 ] || [ "$status" -eq 5 ] || failed+=("${names[$i]} (exit $status)")
done
pids=()

if [ "${#failed[@]}" -gt 0 ]; then
  echo "the suite failed in: ${failed[*]}" >&2
  exit 1
fi
