"""A dataset exported as the question-and-answer workbook it can be imported from again (MaxKB's
``GET /api/dataset/{id}/export``): one sheet per document, one row per paragraph with its title,
its content and its attached questions, one per line. Importing the file into a dataset makes
the same paragraphs with the same questions (``parsing.sheets`` reads this layout)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from gateway.backends import Backend, CallerBackend
from gateway.log_export import sheet_name, workbook_bytes
from gateway.shapes.envelope import download
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.limits import MAX_PARAGRAPH_PAGE_SIZE

COLUMNS = ("分段标题", "分段内容", "问题")
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

router = APIRouter(prefix="/{dataset_id}")


async def _rows(backend: Backend, dataset_id: str, document_id: str) -> list[dict[str, Any]]:
    """The document's paragraphs in order, each with its questions."""
    questions: dict[str, list[str]] = {}
    listed = await backend.unary(
        backend.retrieval.paragraphs.ListQuestions,
        pb.ListQuestionsRequest(dataset_id=dataset_id, document_id=document_id),
    )
    for q in listed.questions:
        questions.setdefault(q.paragraph_id, []).append(q.content)
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        reply = await backend.unary(
            backend.retrieval.paragraphs.ListParagraphs,
            pb.ListParagraphsRequest(
                dataset_id=dataset_id, document_id=document_id, page=page, page_size=MAX_PARAGRAPH_PAGE_SIZE
            ),
        )
        rows += [
            {COLUMNS[0]: p.title, COLUMNS[1]: p.content, COLUMNS[2]: "\n".join(questions.get(p.id, []))}
            for p in reply.paragraphs
        ]
        if len(rows) >= reply.total or not reply.paragraphs:
            return rows
        page += 1


@router.get(
    "/export",
    response_class=Response,
    responses=download("the dataset as an XLSX workbook: a sheet per document, a row per paragraph", XLSX),
)
async def export_dataset(dataset_id: str, backend: CallerBackend) -> Response:
    """Every document with paragraphs, in the dataset's order; a document still being imported
    exports the version it serves now."""
    documents = await backend.unary(
        backend.retrieval.documents.ListDocuments, pb.ListDocumentsRequest(dataset_id=dataset_id)
    )
    taken: set[str] = set()
    sheets = [
        (sheet_name(d.name, taken), COLUMNS, await _rows(backend, dataset_id, d.id))
        for d in documents.documents
        if d.paragraph_count > 0
    ]
    headers = {"Content-Disposition": f'attachment; filename="dataset-{dataset_id}.xlsx"'}
    return Response(content=workbook_bytes(sheets), media_type=XLSX, headers=headers)
