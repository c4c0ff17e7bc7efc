"""The gateway's edge: the HTTP server's limits and what it refuses before any route runs."""
