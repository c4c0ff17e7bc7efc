"""Words put into the sentence a person reads, in their language.

Words this catalogue knows read in full. Words it does not (a newer service's code during a
rolling upgrade, a record of a format no migration converted, a hole the message no longer has)
are never shown half: the reader gets the general words the caller gives, with an error id, and
the log line with that id holds what arrived, so an operator can find it.
"""

from __future__ import annotations

import logging

from kbcore.error_ids import new_error_id, with_error_id
from kbcore.words.language import Language
from kbcore.words.said import Said

log = logging.getLogger(__name__)


def shown_words(words: Said, language: Language, general: Said) -> str:
    """``words`` in ``language``; ``general`` (known words) with an error id when they are not
    known here."""
    if words.known():
        return words.render(language)
    error_id = new_error_id()
    log.warning("words this catalogue does not know (error id %s): %s", error_id, words.as_json())
    return with_error_id(general, error_id).render(language)
