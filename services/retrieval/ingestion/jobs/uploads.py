"""What an upload request becomes before any job is queued: checked, named, one ``Upload`` per document.

Everything a person can be told at once is decided here, in the request: an unknown dataset, a
type the content contradicts, an archive or a file whose structure passes a bound (``preflight``:
cheap, bounded, no parsing library involved), a page that does not answer. A file is checked
where it lies in the spool, in a child process (``parsing.confined.check_sandbox``): the service never
reads it whole. What needs real work (parsing, embedding) is left to the job, whose failures the
document shows.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.document_types import source_type_of_name
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_NAME_CHARS
from kbcore.words.said import said
from services.retrieval.ingestion.jobs.queue import Upload
from services.retrieval.ingestion.jobs.spool import SpoolFolder
from services.retrieval.ingestion.parsing import ParseLimits, sniff
from services.retrieval.ingestion.parsing.confined.check_sandbox import check_in_child
from services.retrieval.ingestion.parsing.upload_check import ARCHIVE, CheckedFile
from services.retrieval.ingestion.parsing.web import page_title
from services.retrieval.ingestion.parsing.web_fetch import FetchedPage, FetchPolicy, fetch_page
from services.retrieval.ingestion.split_rules import SplitRules
from services.retrieval.ingestion.splitter import SplitParagraph

PARAGRAPHS = "paragraphs"  # the source type of a document sent already split


@dataclass(frozen=True)
class FileHead:
    """What comes with an uploaded file: its name (the suffix says its type), the document's name
    ("": from the file; an archive's documents are named by their paths), and the split rules
    (None: as the document was last cut)."""

    filename: str
    name: str = ""
    rules: SplitRules | None = None

    @classmethod
    def of(cls, request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest) -> FileHead:
        return cls(request.file.filename, request.name.strip(), _rules_of(request))

    @classmethod
    def of_part(cls, part: pb.UploadFile) -> FileHead:
        rules = SplitRules.from_message(part.split_rules) if part.HasField("split_rules") else None
        return cls(part.filename, part.name.strip(), rules)


async def uploads_of(
    source: str, request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest, fetch: FetchPolicy
) -> list[Upload]:
    """The documents one request brings as paragraphs or a page (a file goes through the spool:
    ``file_uploads``)."""
    name = request.name.strip()
    rules = _rules_of(request)
    if source == "paragraphs":
        if rules is not None:
            raise InvalidRequest(said("split_rules_cut_file_page_paragraphs"))
        return [_paragraphs_upload(name, request.paragraphs.paragraphs)]
    if source == "url":
        url = request.url.strip()
        return [dataclasses.replace(web_upload(name, url, await fetch_page(url, fetch)), rules=rules)]
    raise InvalidRequest(said("give_document_paragraphs_file_web_page"))


def web_upload(name: str, url: str, page: FetchedPage) -> Upload:
    """A fetched page as the upload of the document of its address: named ``name``, else by
    its title (a page), else by the last segment of its address (a file)."""
    kind = sniff(page.filename, page.data)
    title = page_title(page.data)[:MAX_NAME_CHARS] if kind == "html" else ""
    return Upload(
        _checked(name or title or _stem(page.filename)),
        page.filename,
        "url" if kind == "html" else kind,
        page.data,
        source_url=url,
        etag=page.etag,
        modified=page.modified,
    )


def _rules_of(request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest) -> SplitRules | None:
    """The split rules a submission sends (None: the document's own, or the defaults)."""
    if isinstance(request, pb.SubmitDocumentsRequest) and request.HasField("split_rules"):
        return SplitRules.from_message(request.split_rules)
    return None


def paragraphs_of(upload_source: bytes) -> list[SplitParagraph]:
    """The paragraphs a ``paragraphs`` upload stored on its job."""
    return [SplitParagraph(p["title"], p["content"]) for p in json.loads(upload_source)]


def _paragraphs_upload(name: str, given: Sequence[pb.ParagraphInput]) -> Upload:
    if not name:
        raise InvalidRequest(said("document_given_paragraphs_needs_name"))
    paragraphs = [{"title": p.title.strip(), "content": p.content.strip()} for p in given if p.content.strip()]
    if not paragraphs:
        raise InvalidRequest(said("document_has_no_paragraph_content"))
    data = json.dumps(paragraphs, ensure_ascii=False).encode()
    return Upload(_checked(name), f"{name}.json", PARAGRAPHS, data)


def check_filename(filename: str) -> None:
    """Refused before any byte is read: without a name, a file has no type."""
    if not filename.strip():
        raise InvalidRequest(said("file_needs_name_suffix_says_what"))


async def file_uploads(head: FileHead, path: Path, folder: SpoolFolder, limits: ParseLimits) -> list[Upload]:
    """The documents the file received at ``path`` brings, checked in a child process: itself,
    or an archive's files (written into ``folder`` by the check). Each stays where it lies until
    its job's rows are written."""
    check_filename(head.filename)
    archive = source_type_of_name(head.filename) == ARCHIVE
    checked = await check_in_child(head.filename, path, limits, folder.members() if archive else None)
    if not archive:
        [file] = checked
        name = _checked(head.name or file.title_hint or _stem(head.filename))
        return [_spooled_upload(name, file, head.rules)]
    return [_spooled_upload(_checked(_member_name(file.filename)), file, head.rules) for file in checked]


def _spooled_upload(name: str, file: CheckedFile, rules: SplitRules | None) -> Upload:
    return Upload(name, file.filename, file.kind, Path(file.path), rules=rules, digest=file.digest)


def _stem(filename: str) -> str:
    return pathlib.PurePosixPath(filename.replace("\\", "/")).stem


def _member_name(member: str) -> str:
    """An archive member's document name: its path without the suffix, so that two files of one
    name in different folders stay two documents."""
    path = pathlib.PurePosixPath(member)
    return str(path.with_suffix("")) if path.parent != pathlib.PurePosixPath(".") else path.stem


def _checked(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidRequest(said("document_needs_name"))
    if len(name) > MAX_NAME_CHARS:
        raise InvalidRequest(said("document_name_longer_characters", max_name_chars=MAX_NAME_CHARS))
    return name
