"""Bounded reading of zip files: an uploaded batch, and the zip inside every Office document.

Sizes declared in a zip's headers are only claims. Totals are checked against them first (a
cheap refusal of honest big archives), then counted again while inflating, chunk by chunk, so
a bomb that lies about its sizes stops at the limit instead of filling memory; a part that
inflates far more than any document's XML does is a bomb even under the size limits. Nested archives
are never opened, and member names that climb out of the archive (``..``, absolute paths) are
skipped.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import BinaryIO

from kbcore.document_types import SUPPORTED_TYPES_SENTENCE, source_type_of_name
from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits

_CHUNK = 1 << 16
# Below this, a part's ratio says nothing: a small run of repeated markup packs 100× honestly.
RATIO_FLOOR = 1 << 20
# Given a part's name, what reads its bytes chunk by chunk (b"" ends it), or None to only count it.
PartScanner = Callable[[str], Callable[[bytes], None] | None]
# An Office file is a zip of a few dozen XML parts; thousands of parts is an attack, not a document.
_CONTAINER_MAX_PARTS = 10_000


def _open(filename: str, data: bytes | BinaryIO) -> zipfile.ZipFile:
    """The zip in ``data``: its bytes, or a file read where it lies (only the parts asked for)."""
    try:
        return zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise DocumentRejected(said("damaged_cannot_be_opened_zip_archive", filename=f"{filename!r}")) from exc


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.0f} MiB"


class Inflation:
    """What one file's compressed parts have inflated to so far, refused at the first bound passed.

    Three bounds: the file's total (``budget``), one part's size (``per_part``, for the parts a
    library inflates whole into memory), and a part's inflation ratio once it is past
    ``RATIO_FLOOR`` (honest XML packs 5–20×; a bomb thousands of times).
    """

    def __init__(self, filename: str, limits: ParseLimits, *, per_part: int | None) -> None:
        self.filename = filename
        self.budget = limits.archive_max_bytes
        self.per_part = per_part
        self.max_ratio = limits.max_ratio

    def count(self, part: str, packed: int, inflated: int, added: int) -> None:
        """``added`` more bytes of ``part`` came out (``inflated`` of it so far, from ``packed`` bytes)."""
        self.budget -= added
        if self.budget < 0:
            raise DocumentRejected(
                said("unpacks_more_limit_passed_too_large", self_filename=f"{self.filename!r}", part=f"{part!r}")
            )
        if self.per_part is not None and inflated > self.per_part:
            raise DocumentRejected(
                said(
                    "has_part_unpacks_more_too_large",
                    self_filename=f"{self.filename!r}",
                    part=f"{part!r}",
                    mib_self_per_part=_mib(self.per_part),
                )
            )
        if inflated > RATIO_FLOOR and inflated > self.max_ratio * max(packed, 1):
            raise DocumentRejected(
                said(
                    "has_part_unpacks_more_times_packed",
                    self_filename=f"{self.filename!r}",
                    part=f"{part!r}",
                    self_max_ratio=self.max_ratio,
                )
            )


def inflated_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo, inflation: Inflation) -> Iterator[bytes]:
    """A member's bytes chunk by chunk, counted as they come out, whatever the header declared."""
    total = 0
    try:
        with archive.open(info) as member:
            while chunk := member.read(_CHUNK):
                total += len(chunk)
                inflation.count(info.filename, info.compress_size, total, len(chunk))
                yield chunk
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise DocumentRejected(
            said(
                "damaged_cannot_be_unpacked",
                inflation_filename=f"{inflation.filename!r}",
                info_filename=f"{info.filename!r}",
            )
        ) from exc
    except RuntimeError as exc:  # zipfile's word for an encrypted member
        raise DocumentRejected(
            said(
                "holds_encrypted_file_upload_unencrypted",
                inflation_filename=f"{inflation.filename!r}",
                info_filename=f"{info.filename!r}",
            )
        ) from exc


def _member_name(info: zipfile.ZipInfo) -> str:
    """The member's name as its author wrote it: zips made on Chinese Windows store GBK names without the UTF-8 flag."""
    name = info.filename
    if info.flag_bits & 0x800:
        return name
    try:
        raw = name.encode("cp437")
    except UnicodeEncodeError:
        return name
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return name


def _is_safe(name: str) -> bool:
    """A relative path that stays inside the archive (no ``..``, no root, no drive letter)."""
    path = PurePosixPath(name.replace("\\", "/"))
    if not path.parts or path.is_absolute():
        return False
    return ".." not in path.parts and ":" not in path.parts[0]


def _wanted(info: zipfile.ZipInfo, name: str) -> bool:
    """A document worth ingesting: a supported file, not a folder, not macOS metadata, not an archive inside the archive."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if info.is_dir() or not parts or parts[0] == "__MACOSX" or parts[-1].startswith("."):
        return False
    kind = source_type_of_name(name)
    return kind is not None and kind != "zip" and _is_safe(name)


def archive_members(
    filename: str, data: bytes | BinaryIO, limits: ParseLimits
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """The supported files of an uploaded zip (its bytes, or its file) one after the other, each
    as (path inside the archive, its bytes chunk by chunk), within the limits: a caller keeps one
    member at a time, or none (it writes them out as they come).

    Unsupported files, nested archives and unsafe paths are skipped; too many files or too many
    bytes refuse the whole archive (a caller that stored members before the refusal drops them),
    so a batch is never half taken in.
    """
    with _open(filename, data) as archive:
        members = [(info, _member_name(info)) for info in archive.infolist()]
        chosen = [(info, name) for info, name in members if _wanted(info, name)]
        if not chosen:
            raise DocumentRejected(
                said(
                    "holds_no_document_supported_type",
                    filename=f"{filename!r}",
                    supported_types_sentence=SUPPORTED_TYPES_SENTENCE,
                )
            )
        if len(chosen) > limits.archive_max_files:
            raise DocumentRejected(
                said(
                    "holds_documents_one_archive_may_hold",
                    filename=f"{filename!r}",
                    len_chosen=len(chosen),
                    limits_archive_max_files=limits.archive_max_files,
                )
            )
        declared = sum(info.file_size for info, _ in chosen)
        if declared > limits.archive_max_bytes:
            raise DocumentRejected(
                said(
                    "unpacks_one_archive_may_unpack_most",
                    filename=f"{filename!r}",
                    mib_declared=_mib(declared),
                    mib_limits_archive_max_bytes=_mib(limits.archive_max_bytes),
                )
            )
        inflation = Inflation(filename, limits, per_part=None)  # a member may be a whole PDF
        for info, name in chosen:
            yield name.replace("\\", "/"), inflated_chunks(archive, info, inflation)


def expand_archive(filename: str, data: bytes, limits: ParseLimits) -> list[tuple[str, bytes]]:
    """The supported files of an uploaded zip as (path inside the archive, bytes), all in memory."""
    return [(name, b"".join(chunks)) for name, chunks in archive_members(filename, data, limits)]


def check_container(filename: str, data: bytes, limits: ParseLimits, scan: PartScanner | None = None) -> None:
    """Refuse an Office file (a zip of XML parts) that unpacks past a limit, before a library opens it.

    The parsing libraries inflate parts whole, some outside Python's zipfile, so the bounds are
    enforced here by inflating every part once, counting and keeping nothing; ``scan`` sees the
    parts it asks for chunk by chunk (a sheet's cells are counted that way).
    """
    with _open(filename, data) as archive:
        infos = archive.infolist()
        if len(infos) > _CONTAINER_MAX_PARTS:
            raise DocumentRejected(
                said("has_internal_parts_not_document_person", filename=f"{filename!r}", len_infos=len(infos))
            )
        if sum(info.file_size for info in infos) > limits.archive_max_bytes:
            raise DocumentRejected(
                said(
                    "unpacks_more_too_large_zip_bomb",
                    filename=f"{filename!r}",
                    mib_limits_archive_max_bytes=_mib(limits.archive_max_bytes),
                )
            )
        inflation = Inflation(filename, limits, per_part=limits.max_stream_bytes)
        for info in infos:
            reader = scan(info.filename) if scan is not None else None
            for chunk in inflated_chunks(archive, info, inflation):
                if reader is not None:
                    reader(chunk)
            if reader is not None:
                reader(b"")  # the part's end


def container_names(data: bytes) -> list[str] | None:
    """The part names of a zip, or None when it cannot be opened as one (used by content sniffing)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
