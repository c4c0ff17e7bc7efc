"""Retrieval service: datasets, ingestion, embeddings, search and the iterative retrieval loop."""
