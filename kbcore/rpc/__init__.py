"""gRPC between our own processes: channels, servers, the service credential, and errors as status codes."""
