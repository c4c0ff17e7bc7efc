"""The file types a knowledge base takes in, named once for the gateway, the services and the CLI.

The gateway refuses an unsupported upload (415) before forwarding it, and must say which types
are accepted; the retrieval service decides how to parse by the same names. Both read this one
table so the list a person is shown and the list the parsers handle cannot drift apart. The
suffix only routes the file: the retrieval service still checks that the content agrees.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from kbcore.words.said import said

# suffix -> source type: the parser that handles the file ("zip" is a batch of such files).
SOURCE_TYPES: dict[str, str] = {
    ".md": "md",
    ".markdown": "md",
    ".txt": "txt",
    ".pdf": "pdf",
    ".docx": "docx",
    ".xlsx": "xlsx",
    ".xls": "xls",
    ".csv": "csv",
    ".html": "html",
    ".htm": "html",
    ".pptx": "pptx",
    ".zip": "zip",
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(SOURCE_TYPES)
SUPPORTED_TYPES_SENTENCE = said("supported_types_markdown_md_markdown_text")


def suffix_of(filename: str) -> str:
    """The lower-case suffix of the last path part, whichever separator the uploader's system used."""
    name = PureWindowsPath(PurePosixPath(filename).name).name
    return PurePosixPath(name).suffix.lower()


def source_type_of_name(filename: str) -> str | None:
    """The source type a file name announces ("pdf", "md", …), or None when the type is not taken in."""
    return SOURCE_TYPES.get(suffix_of(filename))
