"""Datasets, documents and paragraphs as the catalog in SQL holds them, and the RPCs that manage them."""
