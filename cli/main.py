"""The command line: the parser, and one command per subcommand over one HTTP client.
Exit codes: 0 done, 1 the gateway or a file failed, 2 usage error.

Every message a person reads is printed in the run's language (``--lang``, else the locale,
else Chinese: ``cli.language``). The help and argparse's usage errors stay English: they are
a developer's reference for the options, whose names are English anyway."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx

from cli.ask import run_ask
from cli.client import (
    TOKEN_MENU,
    cli_settings,
    connection_reason,
    credential,
    default_url,
    make_client,
    unreadable_setting,
)
from cli.evaluate import run_eval
from cli.failure import CliError
from cli.ingest import run_ingest
from cli.language import cli_language
from cli.split_rules import add_split_options, run_preview
from cli.words import CliWords
from kbcore.settings import SettingsError
from kbcore.words.language import LANGUAGES

LANGUAGE_HELP = (
    "the language of every message: zh (Chinese) or en (English); default: the locale's "
    "(LC_ALL, else LC_MESSAGES, else LANG: en_US.UTF-8 is English), else Chinese"
)
EPILOG = (
    "Messages (progress, summaries, errors, and the gateway's refusals, asked for with "
    "Accept-Language) are in Chinese or English, as --lang or the locale says; this help stays English. "
    "--lang may also follow the subcommand."
)


def add_language_option(parser: argparse.ArgumentParser, default: Any) -> None:
    """``--lang`` before the subcommand (``default`` None) or after it (``default`` SUPPRESS, so
    a subcommand that is not given it keeps the value given before)."""
    parser.add_argument("--lang", choices=LANGUAGES, default=default, help=LANGUAGE_HELP)


def build_parser() -> argparse.ArgumentParser:
    description = (
        "Ask a knowledge-base application, load a folder of documents, or measure retrieval, over the HTTP API."
    )
    parser = argparse.ArgumentParser(prog="python -m cli", description=description, epilog=EPILOG)
    add_language_option(parser, None)
    parser.add_argument("--url", default=None, help="gateway URL (default http://$KB_HTTP_HOST:$KB_HTTP_PORT)")
    parser.add_argument(
        "--token",
        default=None,
        help=f"bearer token: a personal token (operator page, {TOKEN_MENU}), the operator token or an "
        "application-… API key (default $KB_TOKEN, else $KB_DATA_DIR/operator.token when readable)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    ask = commands.add_parser("ask", help="ask an application; the answer streams to stdout")
    ask.add_argument("app_id", metavar="APP_ID")
    ask.add_argument("question", metavar="QUESTION")
    ask.add_argument("--chat", metavar="CHAT_ID", help="continue this chat (a follow-up) instead of opening one")
    ask.add_argument("--trace", action="store_true", help="then print the retrieval rounds and the stop reason")

    ingest = commands.add_parser(
        "ingest",
        help="upload a folder of documents (PDF, Word, Excel, CSV, HTML, PowerPoint, Markdown, text, .zip) "
        "into a dataset and wait until they are searchable",
    )
    ingest.add_argument("dataset_id", metavar="DATASET_ID", nargs="?", help="the dataset (or use --create)")
    ingest.add_argument("folder", metavar="PATH", help="a folder of documents, or one file")
    ingest.add_argument("--create", metavar="NAME", help="create a dataset with this name first")
    ingest.add_argument(
        "--pattern", metavar="GLOB", help="which files to send, e.g. '*.pdf' (default: every supported type)"
    )
    ingest.add_argument(
        "--no-wait",
        action="store_true",
        help="return once the files are uploaded, without waiting for them to be parsed and embedded",
    )

    add_split_options(ingest)

    preview = commands.add_parser(
        "preview", help="show the paragraphs a file would make (nothing is stored); the same rules as ingest"
    )
    preview.add_argument("file", metavar="FILE", help="one document file")
    add_split_options(preview)

    evaluate = commands.add_parser(
        "eval", help="recall round by round on questions with gold snippets: one round against the loop"
    )
    evaluate.add_argument("app_id", metavar="APP_ID", help="the application whose datasets and settings are used")
    evaluate.add_argument("questions", metavar="QUESTIONS.jsonl", help="one {id, turns:[{question, gold}]} per line")
    evaluate.add_argument(
        "--no-rewrite", action="store_true", help="ask the last turn without the earlier turns (no rewriting)"
    )
    evaluate.add_argument("--json", action="store_true", help="print the route's full JSON instead of the table")
    for subcommand in (ask, ingest, preview, evaluate):
        add_language_option(subcommand, argparse.SUPPRESS)
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "ingest" and bool(args.dataset_id) == bool(args.create):
        parser.error("ingest takes either a DATASET_ID or --create NAME, not both or neither")
    return args


def print_error(words: CliWords, failure: CliError) -> None:
    print(words("errors.line", message=words.say(failure.phrase)), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    words = CliWords(cli_language(args.lang, os.environ))
    try:
        settings = cli_settings()
    except SettingsError:
        print_error(words, unreadable_setting(os.environ))
        return 2
    url = (args.url or default_url(settings)).rstrip("/")
    token = credential(settings, args.token)
    commands = {"ask": run_ask, "ingest": run_ingest, "eval": run_eval, "preview": run_preview}
    try:
        with make_client(url, token, words.language) as client:
            return commands[args.command](client, args, words)
    except CliError as exc:
        print_error(words, exc)
    except httpx.HTTPError as exc:
        print_error(words, CliError("errors.unreachable", url=url, reason=connection_reason(exc)))
    except KeyboardInterrupt:
        print(words("errors.interrupted"), file=sys.stderr)
        return 130
    return 1
