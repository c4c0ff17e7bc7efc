"""A range of UTC days as the operators' RPCs take it: ``YYYY-MM-DD`` both ends, inclusive.

Records store naive UTC datetimes, so a day is ``[00:00, next day 00:00)`` in those terms. A
range that is reversed, unreadable or longer than the caller allows is refused in words that
name the field, never turned into an empty answer that looks like "nothing happened".
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass

from kbcore.errors import InvalidRequest
from kbcore.words.said import said


@dataclass(frozen=True)
class DayRange:
    first: dt.date
    last: dt.date

    @property
    def start(self) -> dt.datetime:
        """The first instant of the range (naive UTC, as the records store it)."""
        return dt.datetime.combine(self.first, dt.time())

    @property
    def end(self) -> dt.datetime:
        """The first instant after the range."""
        return dt.datetime.combine(self.last + dt.timedelta(days=1), dt.time())

    def days(self) -> Iterator[dt.date]:
        day = self.first
        while day <= self.last:
            yield day
            day += dt.timedelta(days=1)


EARLIEST_DAY = dt.date(1970, 1, 1)  # no record is older; an earlier date is a typo, not a filter
LATEST_DAY = dt.date(9998, 12, 31)  # the day after it still exists, as ``DayRange.end`` needs
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(field: str, text: str) -> dt.date:
    """One ``YYYY-MM-DD`` date within the years records can have; InvalidRequest naming ``field`` otherwise."""
    value = text.strip()
    try:
        day = dt.date.fromisoformat(value) if _DAY.fullmatch(value) else None
    except ValueError:
        day = None
    if day is None or not EARLIEST_DAY <= day <= LATEST_DAY:
        raise InvalidRequest(
            said(
                "must_be_day_written_yyyy_mm",
                field=field,
                earliest_day=EARLIEST_DAY,
                latest_day=LATEST_DAY,
                value_40=f"{value[:40]!r}",
            )
        )
    return day


def day_range(date_from: str, date_to: str, max_days: int, default_days: int) -> DayRange:
    """The range the request names. An empty end is today (UTC); an empty start is
    ``default_days`` before the end, counting the end itself."""
    last = parse_day("date_to", date_to) if date_to.strip() else dt.datetime.now(dt.UTC).date()
    first = parse_day("date_from", date_from) if date_from.strip() else last - dt.timedelta(days=default_days - 1)
    if first > last:
        raise InvalidRequest(said("date_after_date", first=first, last=last))
    span = (last - first).days + 1
    if span > max_days:
        raise InvalidRequest(said("date_range_covers_days_most_are", span=span, max_days=max_days))
    return DayRange(first, last)
