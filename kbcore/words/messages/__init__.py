"""The message catalogue: every sentence the services refuse or fail with, and the words they
store for a person to read later, keyed by a stable code (``MESSAGES``).

A code names one message for good: it travels on the wire (``kbcore.words.said``), and it is
stored in records, so a message is reworded under the same code and never renumbered; a code
that no longer fits gets a new one and the old stays for the records that hold it. One module
per part of the product keeps the entries near their neighbours.

A Chinese sentence keeps as they are only what a developer types: request fields, settings
(``KB_…``), RPC names, paths, file suffixes, HTTP methods and headers, and the names in
``LATIN_WORDS_ALLOWED``; a test holds every other Latin word out.
"""

from __future__ import annotations

from kbcore.words.messages import (
    access,
    accounts,
    chats,
    dataset_contents,
    dataset_routes,
    document_files,
    edge,
    general,
    ingestion_outcomes,
    models,
    openai,
    operations,
    search,
    web_pages,
)
from kbcore.words.messages.message import Message

_PARTS = (
    access,
    accounts,
    chats,
    operations,
    dataset_contents,
    dataset_routes,
    document_files,
    web_pages,
    ingestion_outcomes,
    search,
    models,
    general,
    edge,
    openai,
)


def _merged() -> dict[str, Message]:
    """Every part's messages in one table; a code two parts both use is a mistake caught here."""
    table: dict[str, Message] = {}
    for part in _PARTS:
        for code, message in part.MESSAGES.items():
            if code in table:
                raise ValueError(f"message code {code} is defined twice")
            table[code] = message
    return table


MESSAGES: dict[str, Message] = _merged()

# Latin words a Chinese sentence may keep besides all-capital ones (PDF, JSON, KB) and identifiers
# (with ``_``, ``.``, ``/`` or a digit): names of products and formats, and the protocol words,
# literals and RPC names a developer types as they are.
LATIN_WORDS_ALLOWED: frozenset[str] = frozenset(
    {
        # products and formats
        "Excel",
        "Markdown",
        "Office",
        "PowerPoint",
        "Unicode",
        "WebP",
        "Word",
        # file suffixes (a suffix's dot does not make it an identifier here)
        "csv",
        "docx",
        "htm",
        "html",
        "markdown",
        "md",
        "pdf",
        "pptx",
        "txt",
        "xls",
        "xlsx",
        "zip",
        # units
        "KiB",
        "MiB",
        # HTTP and URL words: headers, the auth scheme, URL schemes
        "Authorization",
        "authorization",
        "Bearer",
        "Content-Type",
        "Origin",
        "data",
        "http",
        "https",
        # JSON literals, and the unit models count text in (the pages say token too)
        "false",
        "true",
        "token",
        # RPC names a refusal tells the caller to use
        "RevokePersonalToken",
        "SubmitDocuments",
    }
)
