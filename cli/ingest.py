"""``python -m cli ingest DATASET_ID|--create NAME PATH``: upload a folder's documents (or one
file; a .zip is a batch of documents), then follow their ingestion until each is ready or
failed, with a progress bar on stderr and a summary of documents and paragraphs on stdout.

Uploads return at once (the server parses and embeds in the background), so the CLI polls the
dataset's document list, one request per poll for every document, until none is queued,
parsing or embedding. ``--no-wait`` stops after the uploads."""

from __future__ import annotations

import argparse
import mimetypes
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

from cli.client import request_data
from cli.failure import CliError, cannot_read
from cli.split_rules import split_form
from cli.words import CliWords
from kbcore.document_types import SUPPORTED_SUFFIXES

BAR_WIDTH = 20
RUNNING = frozenset({"queued", "parsing", "embedding"})  # a job still going; anything else is settled
POLL_SECONDS = 0.5


class ProgressBar:
    """``[#####-----] 3/16 name.md`` on stderr: redrawn in place on a terminal, one line per
    file when stderr is a log or a pipe (where carriage returns would pile up)."""

    def __init__(self, total: int, stream: TextIO, words: CliWords) -> None:
        self.total = total
        self.stream = stream
        self.words = words
        self.tty = stream.isatty()

    def bar(self, done: int, label: str) -> str:
        filled = BAR_WIDTH * done // self.total if self.total else BAR_WIDTH
        return f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{self.total} {label}"

    def starting(self, done: int, label: str) -> None:
        """Only a terminal shows the file in flight; a log gets its line when the file is done."""
        if self.tty:
            self.stream.write(f"\r{self.bar(done, label)}\x1b[K")
            self.stream.flush()

    def finished(self, done: int, label: str, failure: str = "") -> None:
        failed = self.words("ingest.failed", error=failure) if failure else ""
        if not self.tty:
            suffix = f"  {failed}" if failure else ""
            self.stream.write(f"{self.bar(done, label)}{suffix}\n")
        else:
            if failure:  # a failure stays on screen above the bar
                self.stream.write(f"\r\x1b[K{label} {failed}\n")
            self.stream.write(f"\r{self.bar(done, label)}\x1b[K")
            if done == self.total:
                self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class Upload:
    """One file sent: the documents the server queued for it, or why it was refused."""

    name: str
    documents: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


@dataclass(frozen=True)
class Outcome:
    """One document (or one refused file) at the end: its paragraphs, or its error."""

    name: str
    paragraphs: int = 0
    error: str = ""


def select_files(path: Path, pattern: str | None) -> list[Path]:
    """One file as given; a folder's files sorted, hidden ones left out. Without a pattern, the
    types the server takes in; with one, every match is sent and the server judges it (its
    refusal is then reported)."""
    if path.is_file():
        return [path]
    if pattern:
        candidates = path.glob(pattern)
    else:
        candidates = (p for p in path.iterdir() if p.suffix.lower() in SUPPORTED_SUFFIXES)
    return sorted(p for p in candidates if p.is_file() and not p.name.startswith("."))


def upload_file(
    client: httpx.Client, dataset_id: str, path: Path, form: dict[str, str | list[str]], words: CliWords
) -> Upload:
    """One file; a refusal is returned, not raised, so the other files still go. A .zip is
    answered with the list of its documents, any other file with its one document."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        return Upload(path.name, error=words.say(cannot_read(path.name, exc).phrase))
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    try:
        answer = request_data(
            client, "POST", f"/api/dataset/{dataset_id}/document", files={"file": (path.name, content, mime)}, data=form
        )
    except CliError as exc:
        return Upload(path.name, error=words.say(exc.phrase))
    documents = answer if isinstance(answer, list) else [answer]
    return Upload(path.name, [d for d in documents if isinstance(d, dict) and d.get("id")])


def resolve_dataset(client: httpx.Client, dataset_id: str | None, create: str | None, words: CliWords) -> str:
    """Create the dataset, or check that it exists and that we may write to it, once: an
    unknown id or a bad token would otherwise fail every file with the same message."""
    if create:
        dataset = request_data(client, "POST", "/api/dataset", json={"name": create, "desc": ""})
        created = str(dataset["id"]) if isinstance(dataset, dict) else ""
        if not created:
            raise CliError("ingest.no_id")
        print(words("ingest.created", dataset_id=created, name=create), file=sys.stderr, flush=True)
        return created
    assert dataset_id is not None  # the parser requires one of the two
    request_data(client, "GET", f"/api/dataset/{dataset_id}/document")
    return dataset_id


def upload_all(
    client: httpx.Client, dataset_id: str, files: Sequence[Path], form: dict[str, str | list[str]], words: CliWords
) -> list[Upload]:
    bar = ProgressBar(len(files), sys.stderr, words)
    uploads: list[Upload] = []
    for index, path in enumerate(files, 1):
        bar.starting(index - 1, path.name)
        upload = upload_file(client, dataset_id, path, form, words)
        uploads.append(upload)
        bar.finished(index, path.name, upload.error)
    return uploads


def status_label(document: dict[str, Any], words: CliWords) -> str:
    """``name 向量化中 120/300``: the document's status in the page's words, with its progress."""
    status = words.document_status(str(document.get("status", "")))
    progress = document.get("progress") or {}
    total = int(progress.get("total") or 0)
    counted = f" {int(progress.get('done') or 0)}/{total}" if total else ""
    return f"{document.get('name', '')} {status}{counted}"


def settle(document: dict[str, Any] | None, name: str, words: CliWords) -> Outcome:
    """A document no longer running: its paragraphs, or the gateway's error (else what it ended as)."""
    if document is None:
        return Outcome(name, error=words("ingest.deleted"))
    if document.get("status") == "ready":
        return Outcome(name, paragraphs=int(document.get("paragraph_count") or 0))
    if document.get("error"):
        return Outcome(name, error=str(document["error"]))
    return Outcome(name, error=words("ingest.ended_as", status=words.document_status(str(document.get("status")))))


def wait_for_documents(
    client: httpx.Client, dataset_id: str, documents: Sequence[dict[str, Any]], words: CliWords
) -> list[Outcome]:
    """Poll the dataset's document list until none of these is still running; a bar over the
    documents, the one in flight shown with its status and paragraphs embedded."""
    pending = {str(d["id"]): str(d.get("name", "")) for d in documents}
    bar = ProgressBar(len(pending), sys.stderr, words)
    outcomes: list[Outcome] = []
    current = {str(d["id"]): d for d in documents}
    while True:
        for document_id, name in list(pending.items()):
            document = current.get(document_id)
            if document is None or document.get("status") not in RUNNING:
                outcome = settle(document, name, words)
                outcomes.append(outcome)
                del pending[document_id]
                ready = words.document_status("ready")
                bar.finished(len(outcomes), f"{name} {ready}" if not outcome.error else name, outcome.error)
        if not pending:
            return outcomes
        running = [current[i] for i in pending]
        bar.starting(len(outcomes), status_label(max(running, key=lambda d: d.get("status") == "embedding"), words))
        time.sleep(POLL_SECONDS)
        listed = request_data(client, "GET", f"/api/dataset/{dataset_id}/document")
        current = {str(d.get("id")): d for d in listed if isinstance(d, dict)} if isinstance(listed, list) else {}


def nothing_to_upload(path: Path, pattern: str | None) -> CliError:
    if pattern:
        return CliError("ingest.no_match", path=path, pattern=repr(pattern))
    return CliError("ingest.no_documents", path=path, suffixes="/".join(SUPPORTED_SUFFIXES))


def run_ingest(client: httpx.Client, args: argparse.Namespace, words: CliWords) -> int:
    path = Path(args.folder)
    if not path.exists():
        raise CliError("ingest.not_there", path=path)
    files = select_files(path, args.pattern)
    if not files:  # checked before --create, so a wrong folder leaves no empty dataset behind
        raise nothing_to_upload(path, args.pattern)
    dataset_id = resolve_dataset(client, args.dataset_id, args.create, words)
    uploads = upload_all(client, dataset_id, files, split_form(args), words)
    refused = [Outcome(u.name, error=u.error) for u in uploads if u.error]
    documents = [d for u in uploads for d in u.documents]
    if args.no_wait:
        print(queued_summary(dataset_id, len(documents), refused, words))
        return 1 if refused else 0
    outcomes = wait_for_documents(client, dataset_id, documents, words) if documents else []
    print(summary(dataset_id, [*outcomes, *refused], words))
    return 1 if any(o.error for o in (*outcomes, *refused)) else 0


def _failures(failed: Sequence[Outcome], words: CliWords) -> str:
    if not failed:
        return ""
    return words("ingest.failures", count=len(failed), names=words.listed(o.name for o in failed))


def summary(dataset_id: str, outcomes: Sequence[Outcome], words: CliWords) -> str:
    """What became searchable: documents and paragraphs, then the files and documents that failed."""
    done = [o for o in outcomes if not o.error]
    paragraphs = sum(o.paragraphs for o in done)
    line = words(
        "ingest.summary",
        dataset_id=dataset_id,
        documents=words.counted("ingest.documents", len(done)),
        paragraphs=words.counted("ingest.paragraphs", paragraphs),
    )
    return line + _failures([o for o in outcomes if o.error], words)


def queued_summary(dataset_id: str, queued: int, refused: Sequence[Outcome], words: CliWords) -> str:
    """``--no-wait``: what was handed over; the documents are still being parsed and embedded."""
    return words(
        "ingest.queued", dataset_id=dataset_id, documents=words.counted("ingest.documents", queued)
    ) + _failures(refused, words)
