"""How an operator wants a document cut into paragraphs: the rules a preview shows and an import
applies, kept with the document so its next version (a re-upload, a web sync) is cut alike.

- ``max_length``: the most characters a paragraph holds (cut at sentence ends below it);
- ``separators``: text after which a new paragraph always starts, written literally (a blank
  line is ``\\n\\n``; no patterns, so no rule can make the parser run away);
- ``overlap``: characters of a cut paragraph's end repeated at the start of the next piece of
  the same text, so a sentence cut in two is found from either side;
- ``title_levels``: how many heading levels title the paragraphs under them (a deeper heading
  stays in the text);
- ``keep_tables``: a table stays one paragraph whatever its length (else it is cut by rows, each
  piece repeating the header row).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest
from kbcore.words.said import said

DEFAULT_MAX_LENGTH = 600
MIN_MAX_LENGTH, MAX_MAX_LENGTH = 50, 10_000
MAX_SEPARATORS, MAX_SEPARATOR_CHARS = 10, 20
MAX_TITLE_LEVELS = 6
MAX_TABLE_CHARS = 50_000  # a table kept whole is still cut by rows past this


@dataclass(frozen=True)
class SplitRules:
    max_length: int = DEFAULT_MAX_LENGTH
    separators: tuple[str, ...] = ()
    overlap: int = 0
    title_levels: int = MAX_TITLE_LEVELS
    keep_tables: bool = False

    def checked(self) -> SplitRules:
        """These rules, or ``InvalidRequest`` naming the first that is out of bounds."""
        if not MIN_MAX_LENGTH <= self.max_length <= MAX_MAX_LENGTH:
            raise InvalidRequest(
                said(
                    "max_length_must_be_between_characters",
                    min_max_length=MIN_MAX_LENGTH,
                    max_max_length=MAX_MAX_LENGTH,
                    self_max_length=self.max_length,
                )
            )
        if len(self.separators) > MAX_SEPARATORS:
            raise InvalidRequest(
                said("most_separators_not", max_separators=MAX_SEPARATORS, len_self_separators=len(self.separators))
            )
        for separator in self.separators:
            if not separator or len(separator) > MAX_SEPARATOR_CHARS:
                raise InvalidRequest(
                    said(
                        "separator_must_have_1_characters",
                        max_separator_chars=MAX_SEPARATOR_CHARS,
                        separator_40=f"{separator[:40]!r}",
                    )
                )
            if separator.isspace() and "\n" not in separator:
                raise InvalidRequest(said("separator_only_spaces_would_cut_between", separator=f"{separator!r}"))
        if not 0 <= self.overlap <= self.max_length // 2:
            raise InvalidRequest(
                said(
                    "overlap_must_be_between_0_half", self_max_length_2=self.max_length // 2, self_overlap=self.overlap
                )
            )
        if not 1 <= self.title_levels <= MAX_TITLE_LEVELS:
            raise InvalidRequest(
                said(
                    "title_levels_must_be_between_1",
                    max_title_levels=MAX_TITLE_LEVELS,
                    self_title_levels=self.title_levels,
                )
            )
        return self

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_message(cls, message: pb.SplitRules) -> SplitRules:
        """The rules a request sends (a rule left out: its default), checked."""
        return cls(
            max_length=message.max_length if message.HasField("max_length") else DEFAULT_MAX_LENGTH,
            separators=tuple(message.separators),
            overlap=message.overlap,
            title_levels=message.title_levels if message.HasField("title_levels") else MAX_TITLE_LEVELS,
            keep_tables=message.keep_tables,
        ).checked()

    @classmethod
    def from_json(cls, text: str) -> SplitRules:
        """Rules stored with a document ("" = the defaults)."""
        if not text:
            return cls()
        stored: dict[str, Any] = json.loads(text)
        return cls(**{**stored, "separators": tuple(stored.get("separators", ()))})


DEFAULT_RULES = SplitRules()
