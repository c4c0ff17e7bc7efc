"""The command line: the parser, and one command per subcommand over one HTTP client.
Exit codes: 0 done, 1 the gateway or a file failed, 2 usage error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import httpx

from cli.ask import run_ask
from cli.client import CliError, cli_settings, credential, default_url, make_client
from cli.evaluate import run_eval
from cli.ingest import run_ingest
from cli.split_rules import add_split_options, run_preview
from kbcore.settings import SettingsError


def build_parser() -> argparse.ArgumentParser:
    description = (
        "Ask a knowledge-base application, load a folder of documents, or measure retrieval, over the HTTP API."
    )
    parser = argparse.ArgumentParser(prog="python -m cli", description=description)
    parser.add_argument("--url", default=None, help="gateway URL (default http://$KB_HTTP_HOST:$KB_HTTP_PORT)")
    parser.add_argument(
        "--token",
        default=None,
        help="bearer token: a personal token (operator page, 用户 → 个人令牌), the operator token or an "
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
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "ingest" and bool(args.dataset_id) == bool(args.create):
        parser.error("ingest takes either a DATASET_ID or --create NAME, not both or neither")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = cli_settings()
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    url = (args.url or default_url(settings)).rstrip("/")
    token = credential(settings, args.token)
    commands = {"ask": run_ask, "ingest": run_ingest, "eval": run_eval, "preview": run_preview}
    try:
        with make_client(url, token) as client:
            return commands[args.command](client, args)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
    except httpx.HTTPError as exc:
        print(f"error: cannot talk to the gateway at {url}: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 1
