"""The checks an uploaded file passes in its request, on the file as it lies in the spool: what it
really is (``sniff``), its structure's bounds (``preflight``), and an archive's bounds, its files
written out one by one beside it, each checked in turn.

Run in a child process of its own (``check_child``, confined like the parser), so the file is
read whole only there: the service that received it never holds it, and whatever the checks cost
in memory goes when the child ends. The result names each document's file, type, size and
digest (``source_digest``, computed here where the bytes are read anyway).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from services.retrieval.ingestion.parsing.archive import archive_members
from services.retrieval.ingestion.parsing.document import ParseLimits
from services.retrieval.ingestion.parsing.preflight import preflight
from services.retrieval.ingestion.parsing.sniff import sniff
from services.retrieval.ingestion.source_digest import source_digest

ARCHIVE = "zip"


@dataclass(frozen=True)
class CheckedFile:
    """One document's file once checked: its name (an archive member's path inside it), its
    source type, where its bytes lie, how many, their digest, and the name its content suggests
    (a Markdown file's first top-level heading; "" for others)."""

    filename: str
    kind: str
    path: str
    size: int
    digest: str
    title_hint: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def title_hint(kind: str, data: bytes) -> str:
    """A Markdown file's first top-level heading names its document, as it always has."""
    if kind != "md":
        return ""
    text = data.decode("utf-8-sig", errors="replace")
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")


def _checked(filename: str, path: Path, data: bytes, limits: ParseLimits) -> CheckedFile:
    kind = sniff(filename, data)
    if kind != ARCHIVE:
        preflight(kind, filename, data, limits)
    return CheckedFile(filename, kind, str(path), len(data), source_digest(kind, (data,)), title_hint(kind, data))


def check_upload(filename: str, path: Path, limits: ParseLimits, members: Path | None) -> list[CheckedFile]:
    """The documents the file at ``path`` brings: itself, or (an archive, when ``members`` names
    a folder to write them in) each supported file inside it, checked; a refusal of any is a
    ``DocumentRejected`` for the whole. With ``members`` None an archive is returned as it is."""
    upload = _checked(filename, path, path.read_bytes(), limits)
    if upload.kind != ARCHIVE or members is None:
        return [upload]
    files = []
    with path.open("rb") as archive:
        for index, (name, chunks) in enumerate(archive_members(filename, archive, limits)):
            target = members / f"{index:05d}"
            with target.open("wb") as out:
                for chunk in chunks:
                    out.write(chunk)
            files.append(_checked(name, target, target.read_bytes(), limits))
    return files
