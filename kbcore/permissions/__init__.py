"""Who may call what: the needs a route or RPC declares, the principals who call, and the one
rule that joins them (``roles.allows``). ``table`` lists every HTTP route and every RPC with its
needs; the gateway, the chat service and the retrieval service all check against it."""
