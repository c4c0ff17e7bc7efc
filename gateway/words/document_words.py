"""The words about documents on the operator page: a document's ingestion status, where it came
from, and what a web document's sync did. Keyed by proto values and by the source types of
``kbcore.document_types`` (a test holds that each has its words)."""

from __future__ import annotations

from gateway.words.catalogue import Words, named
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.vocabulary import DOCUMENT_STATUS, SYNC_OUTCOME

DOCUMENT_STATUSES = named(
    DOCUMENT_STATUS,
    {
        retrieval_pb.DOCUMENT_STATUS_QUEUED: ("排队中", "Queued"),
        retrieval_pb.DOCUMENT_STATUS_PARSING: ("解析中", "Parsing"),
        retrieval_pb.DOCUMENT_STATUS_EMBEDDING: ("向量化中", "Embedding"),
        retrieval_pb.DOCUMENT_STATUS_READY: ("已就绪", "Ready"),
        retrieval_pb.DOCUMENT_STATUS_FAILED: ("失败", "Failed"),
        retrieval_pb.DOCUMENT_STATUS_CANCELLED: ("已取消", "Cancelled"),
    },
)
# What a web document's sync did, and what its last check found (document.source_state).
SYNC_OUTCOMES = named(
    SYNC_OUTCOME,
    {
        retrieval_pb.SYNC_OUTCOME_UNCHANGED: (
            "网页没有变化，未重新导入",
            "The web page has not changed: nothing was imported again",
        ),
        retrieval_pb.SYNC_OUTCOME_QUEUED: (
            "网页已更新：正在导入新版本，只向量化改动的段落",
            "The web page has changed: importing the new version, embedding only the changed paragraphs",
        ),
        retrieval_pb.SYNC_OUTCOME_GONE: (
            "网页已不存在（404）：文档保留上次的内容",
            "The web page is gone (404): the document keeps its last content",
        ),
        retrieval_pb.SYNC_OUTCOME_FAILED: (
            "网页暂时无法获取：文档保留上次的内容",
            "The web page cannot be fetched for now: the document keeps its last content",
        ),
        retrieval_pb.SYNC_OUTCOME_BUSY: (
            "文档正在导入，稍后再同步",
            "The document is being imported: sync it again later",
        ),
    },
)
SOURCE_STATES: Words = {
    "gone": ("网页已不存在", "The web page is gone"),
    "unreachable": ("网页无法获取", "The web page cannot be fetched"),
}
# Where a document came from: a file's source type, a web page by address, or paragraphs sent
# as JSON.
SOURCE_TYPES: Words = {
    "md": ("Markdown", "Markdown"),
    "txt": ("文本", "Text"),
    "pdf": ("PDF", "PDF"),
    "docx": ("Word", "Word"),
    "xlsx": ("Excel", "Excel"),
    "xls": ("Excel（xls）", "Excel (xls)"),
    "csv": ("CSV", "CSV"),
    "html": ("网页文件", "HTML file"),
    "pptx": ("PowerPoint", "PowerPoint"),
    "zip": ("压缩包", "ZIP archive"),
    "url": ("网页", "Web page"),
    "paragraphs": ("手动录入", "Entered by hand"),
}
