# One image for every process of the stack; compose picks the module each container runs.
# Two stages, each installing exact versions from a lock file, hashes checked.

# The build stage writes the gRPC stubs (grpc_stubs/) from protos/ with grpcio-tools, the build
# lock and nothing else; only the stubs leave this stage, so the image carries no code generator.
FROM python:3.11-slim AS stubs
WORKDIR /src
COPY requirements-build.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements-build.lock
COPY protos/ protos/
COPY scripts/gen_protos.sh scripts/
RUN PYTHON=python scripts/gen_protos.sh

# The image: the runtime lock only. The dev extras (pytest, mypy, playwright, matplotlib, ...)
# serve tests, lint and bench, which never run here. The code runs from /app as in a checkout
# (`python -m services.chat`), so the project itself is not pip-installed.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY . .
COPY --from=stubs /src/grpc_stubs/ grpc_stubs/
