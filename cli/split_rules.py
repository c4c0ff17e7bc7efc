"""The split rules on the command line: the same options for ``preview`` and ``ingest``, sent
as the form fields the gateway reads (MaxKB's ``limit`` and ``patterns``, and ours), so a file
previewed and then ingested with the same options is cut into the same paragraphs."""

from __future__ import annotations

import argparse
import mimetypes
import sys
from pathlib import Path

import httpx

from cli.client import request_data
from cli.failure import cannot_read
from cli.words import CliWords


def add_split_options(parser: argparse.ArgumentParser) -> None:
    rules = parser.add_argument_group("split rules (kept with the document; default: as it was last cut)")
    rules.add_argument("--max-length", type=int, metavar="N", help="characters a paragraph holds at most (50-10000)")
    rules.add_argument(
        "--separator",
        action="append",
        default=[],
        metavar="TEXT",
        help=r"a paragraph always ends after TEXT (repeatable; \n is a line break)",
    )
    rules.add_argument("--overlap", type=int, metavar="N", help="characters a cut piece repeats from the one before")
    rules.add_argument("--title-levels", type=int, metavar="N", help="heading levels that title paragraphs (1-6)")
    rules.add_argument("--keep-tables", action="store_true", help="a table stays one paragraph whatever its length")


def split_form(args: argparse.Namespace) -> dict[str, str | list[str]]:
    """The form fields of the options given (none: the server's rules for the document)."""
    form: dict[str, str | list[str]] = {}
    for field, value in (("limit", args.max_length), ("overlap", args.overlap), ("title_levels", args.title_levels)):
        if value is not None:
            form[field] = str(value)
    if args.separator:
        form["patterns"] = list(args.separator)
    if args.keep_tables:
        form["keep_tables"] = "true"
    return form


def run_preview(client: httpx.Client, args: argparse.Namespace, words: CliWords) -> int:
    """The paragraphs the file would make, one block each (``[n] title`` then the text); nothing is stored."""
    path = Path(args.file)
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise cannot_read(path, exc) from exc
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    answer = request_data(
        client, "POST", "/api/dataset/document/split", files={"file": (path.name, content, mime)}, data=split_form(args)
    )
    [preview] = answer
    for number, paragraph in enumerate(preview["content"], 1):
        print(f"[{number}] {paragraph['title']}".rstrip())
        print(paragraph["content"])
        print()
    shown = len(preview["content"])
    more = words("preview.first_shown", shown=shown) if preview["total"] > shown else ""
    print(words.counted("preview.paragraphs", preview["total"]) + more, file=sys.stderr)
    for separator in preview["unused_separators"]:
        print(words("preview.unused_separator", separator=repr(separator), name=path.name), file=sys.stderr)
    return 0
