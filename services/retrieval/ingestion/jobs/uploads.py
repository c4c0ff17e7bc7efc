"""What an upload request becomes before any job is queued: checked, named, one ``Upload`` per document.

Everything a person can be told at once is decided here, in the request: an unknown dataset, a
type the content contradicts, an archive or a file whose structure passes a bound (``preflight``:
cheap, bounded, no parsing library involved), a page that does not answer. What
needs real work (parsing, embedding) is left to the job, whose failures the document shows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pathlib
from collections.abc import Sequence

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_NAME_CHARS
from services.retrieval.ingestion.jobs.queue import Upload
from services.retrieval.ingestion.parsing import ParseLimits, expand_archive, sniff
from services.retrieval.ingestion.parsing.preflight import preflight
from services.retrieval.ingestion.parsing.web import page_title
from services.retrieval.ingestion.parsing.web_fetch import FetchedPage, FetchPolicy, fetch_page
from services.retrieval.ingestion.split_rules import SplitRules
from services.retrieval.ingestion.splitter import SplitParagraph

PARAGRAPHS = "paragraphs"  # the source type of a document sent already split
ARCHIVE = "zip"


async def uploads_of(
    source: str, request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest, limits: ParseLimits, fetch: FetchPolicy
) -> list[Upload]:
    """The documents one request brings: pre-split paragraphs, a file (an archive: its files), a page."""
    name = request.name.strip()
    rules = _rules_of(request)
    if source == "paragraphs":
        if rules is not None:
            raise InvalidRequest("split rules cut a file or a page: paragraphs sent are kept as they are")
        return [_paragraphs_upload(name, request.paragraphs.paragraphs)]
    if source == "file":
        # Sniffing and unpacking an archive are CPU work on up to KB_ARCHIVE_MAX_MB: off the event loop.
        uploads = await asyncio.to_thread(_file_uploads, name, request.file.filename, request.file.data, limits)
        return [dataclasses.replace(upload, rules=rules) for upload in uploads]
    if source == "url":
        url = request.url.strip()
        return [dataclasses.replace(web_upload(name, url, await fetch_page(url, fetch)), rules=rules)]
    raise InvalidRequest("give the document as paragraphs, as a file or as a web page address")


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
        raise InvalidRequest("a document given as paragraphs needs a name")
    paragraphs = [{"title": p.title.strip(), "content": p.content.strip()} for p in given if p.content.strip()]
    if not paragraphs:
        raise InvalidRequest("the document has no paragraph with content")
    data = json.dumps(paragraphs, ensure_ascii=False).encode()
    return Upload(_checked(name), f"{name}.json", PARAGRAPHS, data)


def _file_uploads(name: str, filename: str, data: bytes, limits: ParseLimits) -> list[Upload]:
    if not filename.strip():
        raise InvalidRequest("the file needs a name: its suffix says what type it is")
    kind = sniff(filename, data)
    if kind != ARCHIVE:
        preflight(kind, filename, data, limits)
        return [Upload(_checked(name or _title_hint(kind, data) or _stem(filename)), filename, kind, data)]
    uploads = [_member_upload(member, content, limits) for member, content in expand_archive(filename, data, limits)]
    if not uploads:
        raise InvalidRequest(f"{filename!r} holds no file of a supported type")
    return uploads


def _member_upload(member: str, content: bytes, limits: ParseLimits) -> Upload:
    kind = sniff(member, content)
    preflight(kind, member, content, limits)
    return Upload(_checked(_member_name(member)), member, kind, content)


def _title_hint(kind: str, data: bytes) -> str:
    """A Markdown file's first top-level heading names its document, as it always has."""
    if kind != "md":
        return ""
    text = data.decode("utf-8-sig", errors="replace")
    return next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")


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
        raise InvalidRequest("the document needs a name")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidRequest(f"document name is longer than {MAX_NAME_CHARS} characters")
    return name
