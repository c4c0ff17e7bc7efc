"""The column type of words a record keeps for a person to read later (why a question or a
document's ingestion failed, what a page's last sync found): the message's code and values as
JSON (``kbcore.words.said``), "" for none, so a record is shown in each reader's language and a
message reworded later still reads right.

A value that is not such JSON (a record written before words were kept by code, which the
migration that converted them could not recognise) reads as words no catalogue knows: shown as
the general words with an error id, never as the stored English.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Dialect, Text
from sqlalchemy.types import TypeDecorator

from kbcore.words.said import UNRECOGNISED, Said


class StoredWords(TypeDecorator[Said | None]):
    """Words as a TEXT column: JSON of the code and values, "" for none."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Said | str | None, dialect: Dialect) -> str:
        # "": the column's default, no words (words are never written as a sentence).
        if value is None or value == "":
            return ""
        if not isinstance(value, Said):
            raise TypeError(f"words are stored by code, not as text: {value!r}")
        return value.as_json()

    def process_result_value(self, value: Any, dialect: Dialect) -> Said | None:
        if not value:
            return None
        try:
            return Said.from_json(str(value))
        except ValueError:
            return Said(UNRECOGNISED)
