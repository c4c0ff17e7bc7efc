"""Searching: one query against the vector store, the multi-round retrieval loop, its evaluation, and grouping."""
