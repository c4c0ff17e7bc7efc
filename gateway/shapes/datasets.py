"""Shapes of datasets, their documents (with the ingestion job's progress) and the paragraphs
an operator manages."""

from __future__ import annotations

from gateway.shapes.envelope import Shape


class ProgressOut(Shape):
    done: int
    total: int


class EmbeddingSwitchOut(Shape):
    to_model_id: str
    status: str
    progress: ProgressOut
    error: str


class DatasetOut(Shape):
    id: str
    name: str
    desc: str
    document_count: int
    paragraph_count: int
    create_time: str
    embedding_model_id: str
    embedding_mode_id: str
    embedding_model_name: str
    embedding_dimension: int
    embedding_switch: EmbeddingSwitchOut | None
    sync_hours: int
    sync_due_at: str


class DetachedApplicationOut(Shape):
    id: str
    name: str


class DetachedOut(Shape):
    detached_applications: list[DetachedApplicationOut]


class DocumentOut(Shape):
    id: str
    dataset_id: str
    name: str
    paragraph_count: int
    char_length: int
    create_time: str
    status: str
    progress: ProgressOut
    error: str
    source_type: str
    update_time: str
    meta: DocumentMetaOut
    source: SourceCheckOut


class DocumentMetaOut(Shape):
    source_url: str | None = None


class SourceCheckOut(Shape):
    checked_at: str
    state: str
    note: str


class SyncOut(Shape):
    outcome: str
    message: str


class SyncedDocumentOut(DocumentOut):
    sync: SyncOut


class SplitParagraphOut(Shape):
    title: str
    content: str


class SplitPreviewOut(Shape):
    name: str
    title: str
    content: list[SplitParagraphOut]
    total: int
    unused_separators: list[str]


class UploadRulesOut(Shape):
    suffixes: list[str]
    max_mb: int
    types: str


class ManagedParagraphOut(Shape):
    id: str
    dataset_id: str
    document_id: str
    title: str
    content: str
    is_active: bool
    position: int


class AttachedQuestionOut(Shape):
    id: str
    content: str
    dataset_id: str
    document_id: str
    paragraph_id: str


class ParagraphPageOut(Shape):
    records: list[ManagedParagraphOut]
    current: int
    size: int
    total: int
