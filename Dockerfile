# One image for every process of the stack; compose picks the module each container runs.
# Runtime dependencies only: the dev extras (pytest, mypy, playwright, matplotlib, ...) serve
# tests, lint and bench, which never run in this image. The stubs are generated with protoc
# from grpcio-tools, a runtime dependency.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TIKTOKEN_CACHE_DIR=/app/data/tiktoken
COPY . .
RUN pip install --no-cache-dir . && PYTHON=python scripts/gen_protos.sh
