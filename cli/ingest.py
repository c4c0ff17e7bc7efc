"""``python -m cli ingest DATASET_ID|--create NAME FOLDER``: upload a folder's documents one
by one, with a progress bar on stderr and a summary of documents and paragraphs."""

from __future__ import annotations

import argparse
import mimetypes
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import httpx

from cli.client import CliError, request_data

BAR_WIDTH = 20
DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")  # what the retrieval service can split


class ProgressBar:
    """``[#####-----] 3/16 name.md`` on stderr: redrawn in place on a terminal, one line per
    file when stderr is a log or a pipe (where carriage returns would pile up)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
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
        if not self.tty:
            suffix = f"  failed: {failure}" if failure else ""
            self.stream.write(f"{self.bar(done, label)}{suffix}\n")
        else:
            if failure:  # a failure stays on screen above the bar
                self.stream.write(f"\r\x1b[K{label} failed: {failure}\n")
            self.stream.write(f"\r{self.bar(done, label)}\x1b[K")
            if done == self.total:
                self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class Upload:
    name: str
    paragraphs: int = 0
    error: str = ""


def select_files(folder: Path, pattern: str | None) -> list[Path]:
    """Sorted, hidden files left out. Without a pattern, the types the server can split; with
    one, every match is sent and the server judges it (its refusal is then reported)."""
    if pattern:
        candidates = folder.glob(pattern)
    else:
        candidates = (p for p in folder.iterdir() if p.suffix.lower() in DOCUMENT_SUFFIXES)
    return sorted(p for p in candidates if p.is_file() and not p.name.startswith("."))


def upload_file(client: httpx.Client, dataset_id: str, path: Path) -> Upload:
    """One file; a refusal is returned, not raised, so the other files still go."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        return Upload(path.name, error=f"cannot read: {exc.strerror or exc}")
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    try:
        document = request_data(
            client, "POST", f"/api/dataset/{dataset_id}/document", files={"file": (path.name, content, mime)}
        )
    except CliError as exc:
        return Upload(path.name, error=str(exc))
    count = document.get("paragraph_count", 0) if isinstance(document, dict) else 0
    return Upload(path.name, paragraphs=int(count))


def resolve_dataset(client: httpx.Client, dataset_id: str | None, create: str | None) -> str:
    """Create the dataset, or check that it exists and that we may write to it, once: an
    unknown id or a bad token would otherwise fail every file with the same message."""
    if create:
        dataset = request_data(client, "POST", "/api/dataset", json={"name": create, "desc": ""})
        created = str(dataset["id"]) if isinstance(dataset, dict) else ""
        if not created:
            raise CliError("the gateway created the dataset but sent no id")
        print(f"created dataset {created} ({create})", file=sys.stderr, flush=True)
        return created
    assert dataset_id is not None  # the parser requires one of the two
    request_data(client, "GET", f"/api/dataset/{dataset_id}/document")
    return dataset_id


def run_ingest(client: httpx.Client, args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder")
    files = select_files(folder, args.pattern)
    if not files:  # checked before --create, so a wrong folder leaves no empty dataset behind
        what = repr(args.pattern) if args.pattern else "/".join(DOCUMENT_SUFFIXES) + " files"
        raise CliError(f"nothing to upload: no {what} in {folder}")
    dataset_id = resolve_dataset(client, args.dataset_id, args.create)
    bar = ProgressBar(len(files), sys.stderr)
    uploads: list[Upload] = []
    for index, path in enumerate(files, 1):
        bar.starting(index - 1, path.name)
        upload = upload_file(client, dataset_id, path)
        uploads.append(upload)
        bar.finished(index, path.name, upload.error)
    print(summary(dataset_id, uploads))
    return 1 if any(u.error for u in uploads) else 0


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary(dataset_id: str, uploads: Sequence[Upload]) -> str:
    done = [u for u in uploads if not u.error]
    failed = [u.name for u in uploads if u.error]
    paragraphs = sum(u.paragraphs for u in done)
    line = f"dataset {dataset_id}: {plural(len(done), 'document')}, {plural(paragraphs, 'paragraph')}"
    return f"{line}; {len(failed)} failed: {', '.join(failed)}" if failed else line
