"""HTTP/SSE gateway: a thin translator from browsers and HTTP clients to the gRPC services."""
