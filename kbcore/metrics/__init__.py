"""Prometheus metrics of every process: one registry per process, the metric declarations in one
module (``catalog``), an ASGI middleware for the gateway and a small HTTP server through which
each gRPC service answers scrapes on its own port. The gRPC server interceptor that observes
every RPC is gRPC plumbing, ``kbcore.rpc.metrics_interceptor``: the metrics import nothing of
``kbcore.rpc``.

Everything is observed once per request, question, model call or job, never per streamed chunk:
the hot path of an answer stays what it was. Labels take bounded values only (route templates,
RPC names, status codes, stop reasons, registered model names), never ids or text a user sent.
"""
