# Two commands on a fresh machine: `make run` (the whole stack with the sample knowledge
# base) and `make test`. Both create .venv and install the pinned dependencies on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(shell find protos -name '*.proto')

.PHONY: run test test-sqlite test-postgres lint stubs check-stubs bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Stubs are generated, git-ignored, and rebuilt whenever a proto changes: they cannot drift.
kb/.generated: $(STAMP) $(PROTOS) scripts/gen_protos.sh
	PYTHON=$(PY) scripts/gen_protos.sh
	touch kb/.generated

stubs: kb/.generated

run: kb/.generated
	$(PY) -m tools.stack

# The suite on SQLite, then again on PostgreSQL when KB_TEST_DATABASE_URL names one.
test: kb/.generated
	$(PY) -m pytest -q
	@if [ -n "$$KB_TEST_DATABASE_URL" ]; then \
		echo "== the suite again on $$KB_TEST_DATABASE_URL =="; \
		KB_DATABASE_URL="$$KB_TEST_DATABASE_URL" $(PY) -m pytest -q; \
	fi

lint: kb/.generated
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

bench: kb/.generated
	$(PY) -m bench

clean:
	rm -rf kb data .pytest_cache .mypy_cache .ruff_cache
