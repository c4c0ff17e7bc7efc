"""The CLI's words in the one language it speaks for a run: its own (``gateway.words.cli_words``)
and the pages' words it shares (progress, stop reasons, document statuses, from
``gateway.labels``), so nothing it prints is written inline in either language.

What is to be said is kept as a ``Phrase`` (a key and its holes' values) until it is printed:
a failure raised deep in a request says only what happened, and the words are chosen where the
language is known."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gateway.labels import labels_json, progress_line, stop_reason_label
from gateway.words.catalogue import in_language
from gateway.words.cli_words import CLI
from kbcore.words.language import Language


@dataclass(frozen=True)
class Phrase:
    """Words not yet said: the dotted key of a CLI word (``ingest.created``) and the values of
    its holes; a value that is itself a ``Phrase`` is said in the same language."""

    key: str
    holes: Mapping[str, object] = field(default_factory=dict)


class CliWords:
    """Every word one run of the CLI prints, in ``language``."""

    def __init__(self, language: Language) -> None:
        self.language = language
        self._tree = in_language(CLI, language)
        self._document_statuses: dict[str, str] = labels_json(language)["document_statuses"]

    def __call__(self, key: str, **holes: object) -> str:
        return self.say(Phrase(key, holes))

    def say(self, phrase: Phrase) -> str:
        """The phrase's template with its holes filled; an unknown key is a KeyError (a
        programming error the unit tests look for), never a half-translated line."""
        template: Any = self._tree
        for part in phrase.key.split("."):
            template = template[part]
        if not isinstance(template, str):
            raise KeyError(f"{phrase.key} is a group of words, not a word")
        values = {name: self.say(value) if isinstance(value, Phrase) else value for name, value in phrase.holes.items()}
        return template.format(**values)

    def counted(self, key: str, count: int, **holes: object) -> str:
        """``count`` of something: the group's ``one`` template for exactly one, else ``other``."""
        return self(f"{key}.{'one' if count == 1 else 'other'}", count=count, **holes)

    def listed(self, items: Iterable[str]) -> str:
        """Items in a row, as the language separates them (``、`` in Chinese, ``, `` in English)."""
        return self("common.list_separator").join(items)

    def yes_no(self, value: object) -> str:
        return self("common.yes" if value else "common.no")

    def progress(self, status: dict[str, Any]) -> str | None:
        """An agent_status payload as the chat page words it; None for a phase this build does not know."""
        return progress_line(status, self.language)

    def stop_reason(self, name: str) -> str:
        """A stop reason as the trace names it; none recorded reads as none."""
        return stop_reason_label(name, self.language) if name else self("common.none")

    def document_status(self, status: str) -> str:
        """A document's status as the operator page names it; a status this build does not know as sent."""
        return self._document_statuses.get(status, status)
