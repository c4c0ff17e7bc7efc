"""One vector-store interface, two implementations: qdrant-edge in-process and a Qdrant server."""
