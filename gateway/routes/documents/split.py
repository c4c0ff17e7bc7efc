"""The split preview (MaxKB v1's ``POST /api/dataset/document/split``) and the split rules an
upload form carries: an operator sees the paragraphs a file would make, adjusts the rules, and
imports it with the same rules (``POST /api/dataset/{id}/document``), which then make exactly
the paragraphs shown. The retrieval service checks the rules' bounds and says which is wrong.

Form fields, MaxKB's names first: ``limit`` (maximum paragraph length), ``patterns`` (one field
per separator, written literally; ``\\n`` is a line break), and ours: ``overlap``,
``title_levels``, ``keep_tables``. MaxKB's ``with_filter`` is accepted and changes nothing
(whitespace is always collapsed)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import FormData, UploadFile

from gateway.backends import CallerBackend
from gateway.edge.body_limits import upload_max_bytes
from gateway.errors import ApiError, ok
from gateway.shapes.datasets import SplitPreviewOut
from gateway.shapes.envelope import REFUSALS, Envelope
from gateway.uploads import admitted, checked_size, form_of
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.document_types import SUPPORTED_TYPES_SENTENCE, source_type_of_name
from kbcore.words.said import said

router = APIRouter(prefix="/api/dataset", tags=["dataset"], responses=REFUSALS)

RULE_FIELDS = ("limit", "patterns", "overlap", "title_levels", "keep_tables", "with_filter")
MAX_PREVIEW_FILES = 5
MAX_RULE_FIELDS = 16  # the rules (ten separators at most) and a name
_NUMBERS = {"limit": "max_length", "overlap": "overlap", "title_levels": "title_levels"}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "")


def split_rules_of(form: FormData) -> pb.SplitRules | None:
    """The split rules an upload or preview form carries; None when it carries none."""
    if not any(field in form for field in RULE_FIELDS):
        return None
    rules = pb.SplitRules()
    for field, name in _NUMBERS.items():
        value = form.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str) or not value.strip().isdigit() or len(value) > 9:
            raise ApiError(400, said("form_field_must_be_whole_number", field=f"{field!r}"))
        setattr(rules, name, int(value))
    for separator in form.getlist("patterns"):
        if not isinstance(separator, str):
            raise ApiError(400, said("form_field_pattern_must_be_text"))
        rules.separators.append(separator.replace("\\n", "\n"))
    keep = form.get("keep_tables")
    if keep is not None:
        if not isinstance(keep, str) or keep.strip().lower() not in (*_TRUE, *_FALSE):
            raise ApiError(400, said("form_field_keep_table_must_be"))
        rules.keep_tables = keep.strip().lower() in _TRUE
    return rules


@router.post("/document/split", response_model=Envelope[list[SplitPreviewOut]])
async def preview_split(request: Request, backend: CallerBackend) -> JSONResponse:
    """One or more files in ``file`` fields and the rules: for each file, its ``name``, the
    paragraphs it would make (``content``: the first 1,000, each ``{title, content}``), their
    ``total``, and the separators that cut nothing in it. Nothing is stored. The files travel as
    an import's do (``gateway.uploads``: within the upload budget, streamed in pieces)."""
    async with admitted(backend, backend.retrieval.documents.PreviewUploads, request) as upload:
        async with form_of(request, max_files=MAX_PREVIEW_FILES, max_fields=MAX_RULE_FIELDS) as form:
            files = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
            if not files:
                raise ApiError(400, said("preview_needs_file_form_field_file"))
            rules = split_rules_of(form) or pb.SplitRules()
            limit = upload_max_bytes(request.app.state.settings)
            for file in files:
                filename = file.filename or ""
                if source_type_of_name(filename) is None:
                    raise ApiError(
                        415,
                        said(
                            "cannot_take", filename=f"{filename!r}", supported_types_sentence=SUPPORTED_TYPES_SENTENCE
                        ),
                    )
                checked_size(file, limit, by_name=True)
            for file in files:
                await upload.send(file, pb.UploadFile(filename=file.filename or "", split_rules=rules))
        reply = await upload.answer()
    return ok(
        [
            {
                "name": file.filename or "",
                "title": preview.title,
                "content": [{"title": p.title, "content": p.content} for p in preview.paragraphs],
                "total": preview.total,
                "unused_separators": list(preview.unused_separators),
            }
            for file, preview in zip(files, reply.previews.previews, strict=True)
        ]
    )
