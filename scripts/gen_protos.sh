#!/usr/bin/env bash
# Generates the Python stubs (+ typing stubs) of every proto into ./kb, the import path
# `kb.<area>.v1` that the proto packages declare. The output is git-ignored and rebuilt
# from protos/ by `make` before anything runs, so it cannot drift from its source.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
rm -rf kb && mkdir -p kb
"$PY" -m grpc_tools.protoc -I protos \
  --python_out=. --pyi_out=. --grpc_python_out=. \
  --plugin=protoc-gen-mypy_grpc="$(dirname "$PY")/protoc-gen-mypy_grpc" --mypy_grpc_out=. \
  $(find protos -name '*.proto' | sort)
