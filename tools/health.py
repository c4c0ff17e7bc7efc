"""``python -m tools.health HOST:PORT``: exit 0 when the gRPC server there reports SERVING;
``python -m tools.health http://HOST:PORT/PATH``: exit 0 when that URL answers 200 (the
gateway). The container health checks of compose.yaml: the standard health service is the one
a gRPC port answers without the service credential, so the check carries no secret."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

TIMEOUT_SECONDS = 2


def grpc_serving(target: str) -> int:
    with grpc.insecure_channel(target) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_SECONDS
            )
        except grpc.RpcError as exc:
            sys.stderr.write(f"{target}: {exc.code().name}\n")
            return 1
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def http_ok(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return 0 if response.status == 200 else 1
    except (urllib.error.URLError, OSError) as exc:
        sys.stderr.write(f"{url}: {exc}\n")
        return 1


def main() -> int:
    target = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051"
    return http_ok(target) if target.startswith("http://") else grpc_serving(target)


if __name__ == "__main__":
    sys.exit(main())
