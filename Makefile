# Two commands on a fresh machine: `make run` (the whole stack with the sample knowledge
# base) and `make test`. Both create .venv on first use: `make run` installs the pinned runtime
# dependencies only; `make test` (and lint, bench) also the dev extras, and the browser and font
# the browser tests need, through apt (scripts/test-deps.sh).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# One stamp per install: the dev one ('.[dev]', a superset) touches the runtime one as well.
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
PROTOS := $(shell find protos -name '*.proto')

# The typed gRPC stubs that mypy reads come from mypy-protobuf, a dev extra (scripts/gen_protos.sh
# uses it when installed). When a goal needs the dev extras, the stubs wait for that install and
# are regenerated after it, so `make test` after `make run` does not keep stubs made without it.
DEV_GOALS := test lint bench
STUBS_AFTER := $(if $(filter $(DEV_GOALS),$(MAKECMDGOALS)),$(DEV),$(RUNTIME))

.PHONY: run test test-sqlite test-postgres lint stubs check-stubs bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(RUNTIME): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(DEV): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(RUNTIME) $@

# Stubs are generated, git-ignored, and rebuilt whenever a proto changes: they cannot drift.
grpc_stubs/.generated: $(STUBS_AFTER) $(PROTOS) scripts/gen_protos.sh
	PYTHON=$(PY) scripts/gen_protos.sh
	touch grpc_stubs/.generated

stubs: grpc_stubs/.generated

run: $(RUNTIME) grpc_stubs/.generated
	$(PY) -m tools.stack

# The suite on SQLite, then again on PostgreSQL when KB_TEST_DATABASE_URL names one: there every
# test but those whose database is a SQLite file of their own (marker own_database). First the
# system packages the browser tests need (Debian's chromium and a CJK font), installed with apt
# when missing, so this passes by itself on a fresh machine.
test: $(DEV) grpc_stubs/.generated
	scripts/test-deps.sh
	$(PY) -m pytest -q
	@if [ -n "$$KB_TEST_DATABASE_URL" ]; then \
		echo "== the suite again on $$KB_TEST_DATABASE_URL =="; \
		KB_DATABASE_URL="$$KB_TEST_DATABASE_URL" $(PY) -m pytest -q -m "not own_database"; \
	fi

lint: $(DEV) grpc_stubs/.generated
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_function_length.py

bench: $(DEV) grpc_stubs/.generated
	$(PY) -m bench

clean:
	rm -rf grpc_stubs kb data .pytest_cache .mypy_cache .ruff_cache
