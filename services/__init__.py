"""Services of the knowledge-base chat stack; each runs as ``python -m services.<name>``."""
