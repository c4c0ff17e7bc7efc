# Two commands on a fresh machine: `make run` (the whole stack with the sample knowledge
# base) and `make test`. Both create .venv on first use and install exact versions, hashes
# checked, from the lock files that `make lock` writes from pyproject.toml: `make run` the
# runtime lock (requirements.lock); `make test` (and lint, bench) the dev lock
# (requirements-dev.lock: runtime, dev and build extras), and the browser and font the browser
# tests need, through apt (scripts/test-deps.sh). The stubs need the build lock (grpcio-tools),
# which `make stubs` installs first; the image's runtime stage never gets it (Dockerfile).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP_INSTALL := $(PY) -m pip install --quiet
# One stamp per lock installed: the dev lock, a superset of the other two, touches theirs as well.
RUNTIME := $(VENV)/.installed-runtime
BUILD := $(VENV)/.installed-build
DEV := $(VENV)/.installed-dev
PROTOS := $(shell find protos -name '*.proto')

# The typed gRPC stubs that mypy reads come from mypy-protobuf, a dev extra (scripts/gen_protos.sh
# uses it when installed). When a goal needs the dev extras, the stubs wait for that install and
# are regenerated after it, so `make test` after `make run` does not keep stubs made without it.
DEV_GOALS := test lint bench fuzz
STUBS_AFTER := $(if $(filter $(DEV_GOALS),$(MAKECMDGOALS)),$(DEV),$(BUILD))

.PHONY: run test lint stubs bench fuzz clean lock

# The locks are installed by the pip the dev lock pins (hashes checked), put in place before
# anything else: the pip a Python bundles may refuse a hashed lock when a locked package asks
# for another's extra (httpx[http2]) and the index has a newer release than the lock pins.
$(PY):
	$(PYTHON) -m venv $(VENV)
	awk '/^pip==/{p=1} p{print} p&&!/\\$$/{exit}' requirements-dev.lock > $(VENV)/pip.lock
	$(VENV)/bin/python -m pip install --quiet --no-deps --require-hashes -r $(VENV)/pip.lock

# Each install is the lock, then the project itself without dependencies (it only records
# kb-chat's metadata: the code runs from the checkout), so nothing unlocked comes in.
$(RUNTIME): requirements.lock pyproject.toml | $(PY)
	$(PIP_INSTALL) --require-hashes -r requirements.lock
	$(PIP_INSTALL) --no-deps -e .
	touch $@

$(BUILD): requirements-build.lock | $(PY)
	$(PIP_INSTALL) --require-hashes -r requirements-build.lock
	touch $@

$(DEV): requirements-dev.lock pyproject.toml | $(PY)
	$(PIP_INSTALL) --require-hashes -r requirements-dev.lock
	$(PIP_INSTALL) --no-deps -e .
	touch $(RUNTIME) $(BUILD) $@

# Stubs are generated, git-ignored, and rebuilt whenever a proto changes: they cannot drift.
grpc_stubs/.generated: $(STUBS_AFTER) $(PROTOS) scripts/gen_protos.sh
	PYTHON=$(PY) scripts/gen_protos.sh
	touch grpc_stubs/.generated

stubs: grpc_stubs/.generated

run: $(RUNTIME) grpc_stubs/.generated
	$(PY) -m tools.stack

# The suite on SQLite and, when KB_TEST_DATABASE_URL names one, on PostgreSQL at the same time
# (scripts/run_suite.sh): there every test but those whose database is a SQLite file of their own
# (marker own_database). First the system packages the browser tests need (Debian's chromium and
# a CJK font), installed with apt when missing, so this passes by itself on a fresh machine.
# Each pass ends with its slowest steps and refreshes its record of where the time went
# (tests/durations/): what to look at when the suite's time grows.
test: $(DEV) grpc_stubs/.generated
	scripts/test-deps.sh
	PY=$(PY) scripts/run_suite.sh

lint: $(DEV) grpc_stubs/.generated
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_function_length.py
	$(PY) scripts/check_lock.py
	$(PY) scripts/check_private_imports.py

bench: $(DEV) grpc_stubs/.generated
	$(PY) -m bench

# The HTTP API's fuzz run alone, four times as deep as in `make test` (tests/e2e/test_fuzz_http.py).
fuzz: $(DEV) grpc_stubs/.generated
	KB_FUZZ_DEPTH=4 $(PY) -m pytest -q tests/e2e/test_fuzz_http.py

# Rewrites the lock files from pyproject.toml with pip-tools (a dev extra), for this Python on
# Linux x86_64, keeping every locked version that pyproject.toml still allows: `make lock
# LOCK_FLAGS=--upgrade` takes the newest allowed, `LOCK_FLAGS='--upgrade-package numpy'` one
# package's. The runtime lock comes first and holds the other two to its versions, so the three
# agree on every package they share. The build lock is the build extra alone, read from
# pyproject.toml: the image's build stage installs nothing else.
LOCK_FLAGS ?=
PIP_COMPILE = CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe \
	--strip-extras --no-emit-index-url --no-emit-find-links --no-emit-trusted-host $(LOCK_FLAGS)
BUILD_EXTRA = $(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["build"]))'

lock: $(DEV)
	$(PIP_COMPILE) -o requirements.lock pyproject.toml
	$(BUILD_EXTRA) | $(PIP_COMPILE) -c requirements.lock -o requirements-build.lock -
	$(PIP_COMPILE) --extra dev --extra build -c requirements.lock -c requirements-build.lock -o requirements-dev.lock pyproject.toml
	$(PY) scripts/check_lock.py

clean:
	rm -rf grpc_stubs kb data .pytest_cache .mypy_cache .ruff_cache
