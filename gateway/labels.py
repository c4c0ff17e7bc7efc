"""The words people read: Chinese labels for stop reasons, record statuses, search modes,
document statuses and source types, and the live progress wording (the seed's). The only copy — the pages load it as
``/ui/labels.json`` and the CLI imports it. Keyed by proto values, so a label can only exist
for a value the protos define, and its wire name comes from the descriptors."""

from __future__ import annotations

from typing import Any

from kb.common.v1 import common_pb2
from kb.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.vocabulary import DOCUMENT_STATUS, RECORD_STATUS, SEARCH_MODE, STOP_REASON

# The seed's table of stop reasons (§6.1).
_STOP_REASONS = {
    common_pb2.STOP_REASON_SUFFICIENT: "资料充分",
    common_pb2.STOP_REASON_MAX_ROUNDS: "达到检索轮次上限",
    common_pb2.STOP_REASON_DUPLICATE_QUERY: "查询重复",
    common_pb2.STOP_REASON_NO_NEW_EVIDENCE: "未发现新增资料",
    common_pb2.STOP_REASON_EVIDENCE_BUDGET: "达到资料容量上限",
    common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY: "无后续查询",
    common_pb2.STOP_REASON_NO_DATASETS: "未关联知识库",
    common_pb2.STOP_REASON_ASSESSMENT_ERROR: "资料核验未完成",
}
_RECORD_STATUSES = {
    common_pb2.RECORD_STATUS_RUNNING: "回答中",
    common_pb2.RECORD_STATUS_ANSWERED: "已回答",
    common_pb2.RECORD_STATUS_FAILED: "回答失败",
    common_pb2.RECORD_STATUS_STOPPED: "已停止",
    common_pb2.RECORD_STATUS_INTERRUPTED: "已中断",
}
_SEARCH_MODES = {
    common_pb2.SEARCH_MODE_HYBRID: "混合",
    common_pb2.SEARCH_MODE_VECTOR: "向量",
    common_pb2.SEARCH_MODE_KEYWORD: "关键词",
}
_DOCUMENT_STATUSES = {
    retrieval_pb.DOCUMENT_STATUS_QUEUED: "排队中",
    retrieval_pb.DOCUMENT_STATUS_PARSING: "解析中",
    retrieval_pb.DOCUMENT_STATUS_EMBEDDING: "向量化中",
    retrieval_pb.DOCUMENT_STATUS_READY: "已就绪",
    retrieval_pb.DOCUMENT_STATUS_FAILED: "失败",
}
# Where a document came from: a file's source type (kbcore.document_types.SOURCE_TYPES; a test
# holds that each has a label), a web page by address, or paragraphs sent as JSON.
_SOURCE_TYPES = {
    "md": "Markdown",
    "txt": "文本",
    "pdf": "PDF",
    "docx": "Word",
    "xlsx": "Excel",
    "xls": "Excel（xls）",
    "csv": "CSV",
    "html": "网页文件",
    "pptx": "PowerPoint",
    "zip": "压缩包",
    "url": "网页",
    "paragraphs": "手动录入",
}

STOP_REASON_LABELS = {STOP_REASON.name(value): label for value, label in _STOP_REASONS.items()}
RECORD_STATUS_LABELS = {RECORD_STATUS.name(value): label for value, label in _RECORD_STATUSES.items()}
SEARCH_MODE_LABELS = {SEARCH_MODE.name(value): label for value, label in _SEARCH_MODES.items()}
DOCUMENT_STATUS_LABELS = {DOCUMENT_STATUS.name(value): label for value, label in _DOCUMENT_STATUSES.items()}
SOURCE_TYPE_LABELS = dict(_SOURCE_TYPES)
STOP_REASON_FALLBACK = "已完成"

# One line per agent_status phase; {placeholders} are the payload's fields.
PROGRESS = {
    "context": "正在读取会话上下文…",
    "compacting": "Compacting context · 上下文 token 超出预算，正在压缩…",
    "retrieving": "第 {round} 轮检索：{query}",
    "assessed_sufficient": "资料已充分，准备回答…",
    "assessed_missing": "继续查找资料：{missing}",
    "assessed_unnamed_gap": "继续查找资料…",
    "generating": "正在根据检索资料生成回答…",
}


def stop_reason_label(name: str) -> str:
    return STOP_REASON_LABELS.get(name, STOP_REASON_FALLBACK)


def progress_line(status: dict[str, Any]) -> str | None:
    """The progress wording for one agent_status payload; None for a phase this build does not know."""
    phase = status.get("phase")
    if phase == "assessed":
        if status.get("sufficient"):
            return PROGRESS["assessed_sufficient"]
        return PROGRESS["assessed_missing" if status.get("missing") else "assessed_unnamed_gap"].format(**status)
    template = PROGRESS.get(str(phase))
    if template is None:
        return None
    return template.format_map(_Blank(status))


class _Blank(dict[str, Any]):
    """Formatting values: a field the payload lacks reads as '?', never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


def labels_json() -> dict[str, Any]:
    """What the pages load: every label and the progress wording."""
    return {
        "stop_reasons": STOP_REASON_LABELS,
        "stop_reason_fallback": STOP_REASON_FALLBACK,
        "record_statuses": RECORD_STATUS_LABELS,
        "search_modes": SEARCH_MODE_LABELS,
        "document_statuses": DOCUMENT_STATUS_LABELS,
        "source_types": SOURCE_TYPE_LABELS,
        "progress": PROGRESS,
    }
