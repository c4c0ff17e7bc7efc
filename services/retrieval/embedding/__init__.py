"""Embedders, the embedding spaces they write to, and changing a dataset's embedding model."""
