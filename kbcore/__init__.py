"""Shared core imported by every service: settings, tokens, database, model clients, gRPC bootstrap."""
