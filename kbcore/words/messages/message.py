"""One message of the catalogue: the same sentence in each language a person reads."""

from __future__ import annotations

from typing import NamedTuple

from kbcore.words.language import Language


class Message(NamedTuple):
    """A sentence with ``{name}`` holes, in English and in Chinese, with the same holes.

    English is what the services' logs and their gRPC callers read; Chinese is the product's
    first language. The code that raises a refusal names the message by its code and fills the
    holes by name, so either sentence can be reworded without the other breaking."""

    en: str
    zh: str

    def template(self, language: Language) -> str:
        """The sentence with holes in ``language``."""
        return self.en if language == "en" else self.zh
