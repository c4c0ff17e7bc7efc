# One image for every process of the stack; compose picks the module each container runs.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TIKTOKEN_CACHE_DIR=/app/data/tiktoken
COPY . .
RUN pip install --no-cache-dir '.[dev]' && PYTHON=python scripts/gen_protos.sh
