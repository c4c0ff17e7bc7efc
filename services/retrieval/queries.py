"""Query normalisation for de-duplication: lower-case, no whitespace, no punctuation."""

from __future__ import annotations

import unicodedata


def normalise_query(query: str) -> str:
    folded = unicodedata.normalize("NFKC", query).lower()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))
