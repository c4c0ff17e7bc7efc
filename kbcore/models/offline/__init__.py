"""The model used when no endpoint is configured: extractive, deterministic, no network."""
