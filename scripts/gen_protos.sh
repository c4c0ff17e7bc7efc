#!/usr/bin/env bash
# Generates the Python stubs (+ typing stubs) of every proto into ./grpc_stubs, the import path
# `grpc_stubs.<area>.v1` (the proto packages keep their wire names `kb.<area>.v1`). The output is git-ignored and rebuilt
# from protos/ by `make` before anything runs, so it cannot drift from its source.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# protoc (grpcio-tools, the build extra: requirements-build.lock, which `make stubs` installs
# first) writes the code and the messages' .pyi. The typed gRPC stubs (*_pb2_grpc.pyi) come from
# mypy-protobuf's plugin, a dev extra that only mypy needs: used when installed (make lint/test),
# skipped elsewhere (make run, the image's build stage).
SCRIPTS=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
GRPC_PYI=()
if [ -x "$SCRIPTS/protoc-gen-mypy_grpc" ]; then
  GRPC_PYI=(--plugin=protoc-gen-mypy_grpc="$SCRIPTS/protoc-gen-mypy_grpc" --mypy_grpc_out=.)
fi
rm -rf grpc_stubs && mkdir -p grpc_stubs
"$PY" -m grpc_tools.protoc -I protos \
  --python_out=. --pyi_out=. --grpc_python_out=. "${GRPC_PYI[@]}" \
  $(find protos -name '*.proto' | sort)
