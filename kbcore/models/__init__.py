"""Model clients: one interface for the four model jobs, remote (OpenAI-compatible) or offline."""
