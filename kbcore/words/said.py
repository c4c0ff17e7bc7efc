"""Words with a code: what a refusal, a failure or a stored note says, as the code of its message
in the catalogue (``kbcore.words.messages``) and the values of the message's holes.

The code that refuses writes ``said("chat_does_not_exist", chat_id=chat_id)``; the words travel
as they are, code and values, in the gRPC status's details and in the records that keep them,
and only where a person reads them are they put into a sentence in that person's language. So
no sentence is ever recognised from its English, and rewording one language's sentence leaves
the other's working. ``str()`` of the words is the English sentence: what logs and the services'
gRPC callers read.

A value is text, or words of their own (``said("…", reason=said("…"))``): the part a sentence is
made of reads in the same language as the whole. An exception carrying words given as a value
passes on its words.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from kbcore.words.language import Language
from kbcore.words.messages import MESSAGES

Value: TypeAlias = "str | Said"
LISTED = "listed"  # "{first}; {rest}": one more item before the rest of a list
# The code of words that could not be read (a record of an older format, English a service sent
# without words): no catalogue has it, so they are shown as general words with an error id.
UNRECOGNISED = "unrecognised_words"
_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Said:
    """A message's code and the values of its holes."""

    code: str
    values: Mapping[str, Value] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.render("en") if self.known() else f"{self.code} {dict(self.values)!r}"

    def known(self) -> bool:
        """True if this catalogue has the message and every hole's value (and so has every
        part's): words from a newer service, or a record of an older format, may not be."""
        message = MESSAGES.get(self.code)
        if message is None or set(_holes(message.en)) - set(self.values):
            return False
        return all(value.known() for value in self.values.values() if isinstance(value, Said))

    def render(self, language: Language) -> str:
        """The sentence in ``language``, each value put in its hole (``known()`` words only)."""
        template = MESSAGES[self.code].template(language)
        filled = {name: v.render(language) if isinstance(v, Said) else v for name, v in self.values.items()}
        return template.format_map(filled)

    def as_json(self) -> str:
        """The words as a record stores them."""
        return json.dumps(_plain(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Said:
        """Words a record stored (``as_json``); ValueError for text that is not such words."""
        return _from_plain(json.loads(text))


def said(code: str, /, **values: object) -> Said:
    """Words of the message ``code`` with its holes' values: text as ``str()`` gives it, words as
    they are, and an exception that carries words gives those."""
    return Said(code, {name: _value(value) for name, value in values.items()})


def listed(parts: Sequence[Said]) -> Said:
    """Several words as one list (``a; b; c``), in the reader's language's punctuation."""
    if len(parts) == 1:
        return parts[0]
    return said(LISTED, first=parts[0], rest=listed(parts[1:]))


def said_in(error: BaseException) -> Said | None:
    """The words an exception was raised with, if it was raised with words."""
    first = error.args[0] if error.args else None
    return first if isinstance(first, Said) else None


def _value(value: object) -> Value:
    if isinstance(value, Said):
        return value
    if isinstance(value, BaseException) and (words := said_in(value)) is not None:
        return words
    return str(value)


def _holes(template: str) -> list[str]:
    return [name for _, name, _, _ in _FORMATTER.parse(template) if name is not None]


def _plain(words: Said) -> dict[str, Any]:
    values = {name: _plain(v) if isinstance(v, Said) else v for name, v in words.values.items()}
    return {"code": words.code, "values": values}


def _from_plain(plain: Any) -> Said:
    if not (isinstance(plain, dict) and isinstance(plain.get("code"), str) and isinstance(plain.get("values"), dict)):
        raise ValueError("not stored words: a code and values are expected")
    values: dict[str, Value] = {}
    for name, value in plain["values"].items():
        values[str(name)] = value if isinstance(value, str) else _from_plain(value)
    return Said(plain["code"], values)
