"""The operator page's words for the conversation log (where a question came from, the filters,
the pager, the export) and for the knowledge-gap report with its "improve this answer" form."""

from __future__ import annotations

from gateway.words.catalogue import Words, named
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.vocabulary import LOG_SOURCE

# Where a question came from (kb.chat.v1.LogSource).
LOG_SOURCES = named(
    LOG_SOURCE,
    {
        chat_pb.LOG_SOURCE_PAGE: ("管理员页面", "Operator page"),
        chat_pb.LOG_SOURCE_SHARE_LINK: ("分享链接", "Share link"),
        chat_pb.LOG_SOURCE_API_KEY: ("API Key", "API key"),
        chat_pb.LOG_SOURCE_OPENAI_API: ("OpenAI 接口", "OpenAI API"),
    },
)
LOG: Words = {
    "all": ("全部", "All"),
    "sources": LOG_SOURCES,
    "unknown_source": ("未记录", "Not recorded"),
    "votes": {"up": ("赞同", "Helpful"), "down": ("反对", "Not helpful")},
    "not_voted": ("未评价", "No vote"),
    "sufficient": {"true": ("充分", "Enough"), "false": ("不充分", "Not enough")},
    "no_stop_reason": ("无（未检索）", "None (no search)"),
    "open": ("查看", "Open"),
    "close": ("收起", "Close"),
    "record_title": ("记录详情", "Record details"),
    "vote_reason": ("评价原因：", "Reason given: "),
    # A failed record's cause, which only the operator sees (its reader got the error id).
    "error_detail": ("失败原因（仅运营者可见）：", "Cause (operators only): "),
    "prev": ("上一页", "Previous"),
    "next": ("下一页", "Next"),
    "page": ("第 {page} / {pages} 页，共 {total} 条", "Page {page} of {pages}, {total} records"),
    "empty": ("没有符合条件的记录。", "No records match."),
    "export_done": ("已导出 {exported} 条记录。", "Exported {exported} records."),
    "export_cut": (
        "符合条件的记录共 {total} 条，超过导出上限：已导出最新的 {exported} 条。",
        "{total} records match, more than an export may hold: exported the newest {exported}.",
    ),
}

KNOWLEDGE: Words = {
    "count": ("{count} 条记录", "{count} records"),
    "gaps": ("缺失的资料", "Missing evidence"),
    "examples": ("示例问题", "Example questions"),
    "empty": ("这段时间没有资料不足的提问。", "No question lacked evidence in this period."),
    "summary": (
        "共分析 {records} 条资料不足的记录，分为 {groups} 组。",
        "{records} records without enough evidence, in {groups} groups.",
    ),
    "improve_title": ("改进这条回答", "Improve this answer"),
    "dataset": ("写入知识库", "Knowledge base to write to"),
    "question": ("问题（段落标题）", "Question (the paragraph's title)"),
    "answer": ("正确的回答（段落内容）", "The right answer (the paragraph's content)"),
    "save": ("写入知识库", "Write to the knowledge base"),
    "saved": (
        "已写入知识库“{dataset}”，之后的提问即可检索到这段回答。",
        "Written to the knowledge base “{dataset}”: questions from now on can find this answer.",
    ),
    "no_dataset": ("请先选择一个知识库。", "Choose a knowledge base first."),
    "no_answer": ("请填写正确的回答。", "Give the right answer."),
    "record_title": ("记录详情", "Record details"),
    "close": ("收起", "Close"),
}
