"""The one check of a requested page, for every RPC that lists page by page."""

from __future__ import annotations

from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_PAGE_SIZE


def checked_page(page: int, page_size: int, most: int = MAX_PAGE_SIZE) -> tuple[int, int]:
    """The page (1-based) and its size, refused in words when out of range: an int32 the client
    sent must become a 400 that says so, never an empty page or an SQL error."""
    if page < 1:
        raise InvalidRequest(f"page must be 1 or more, got {page}")
    if not 1 <= page_size <= most:
        raise InvalidRequest(f"page_size must be between 1 and {most}, got {page_size}")
    return page, page_size
