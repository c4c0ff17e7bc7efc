"""The one check of a requested page, for every RPC that lists page by page."""

from __future__ import annotations

from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_PAGE_SIZE
from kbcore.words.said import said


def checked_page(page: int, page_size: int, most: int = MAX_PAGE_SIZE) -> tuple[int, int]:
    """The page (1-based) and its size, refused in words when out of range: an int32 the client
    sent must become a 400 that says so, never an empty page or an SQL error."""
    if page < 1:
        raise InvalidRequest(said("page_must_be_1_more_got", page=page))
    if not 1 <= page_size <= most:
        raise InvalidRequest(said("page_size_must_be_between_1", max_page_size=most, request_page_size=page_size))
    return page, page_size
