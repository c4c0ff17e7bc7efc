"""Messages about what a document's ingestion or a page's sync ended with, stored and shown on the document."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "ingestion_failed": Message(
        "ingestion failed",
        "导入失败",
    ),
    "ingestion_cancelled_operator": Message(
        "ingestion cancelled by an operator",
        "导入已被运营者取消",
    ),
    "cancelled_operator": Message(
        "cancelled by an operator",
        "已被运营者取消",
    ),
    "superseded_upload_another_vector_store": Message(
        "superseded by an upload to another vector store",
        "已被上传到另一个向量库的版本取代",
    ),
    "internal_error_stopped_ingestion_service_log": Message(
        "an internal error stopped the ingestion; the service log has the details",
        "内部错误中止了导入，详情见服务日志",
    ),
    "ingestion_stopped_times_without_finishing_retrieval": Message(
        "ingestion stopped {restarts} times without finishing (the retrieval service restarted while it ran); upload the file again to retry",
        "导入中断了 {restarts} 次仍未完成（运行期间检索服务重启了）：请重新上传文件再试",
    ),
    "previous_version_still_searchable": Message(
        "{failure} The previous version is still searchable.",
        "{failure}。旧版本仍可检索。",
    ),
    "ingestion_document_queued_running": Message(
        "an ingestion of this document is queued or running",
        "这个文档已有导入在排队或进行中",
    ),
    "page_not_modified_304": Message(
        "the page is not modified (304)",
        "网页没有改动（304）",
    ),
    "page_same_served_version": Message(
        "the page is the same as the served version",
        "网页与正在使用的版本相同",
    ),
    "page_changed_new_version_being_ingested": Message(
        "the page changed: its new version is being ingested",
        "网页有改动：正在导入新版本",
    ),
    "document_keeps_serving_last_version": Message(
        "{exc}; the document keeps serving its last version",
        "{exc}；文档继续使用上一个版本",
    ),
    # What a change of embedding model ended with (services/retrieval/ingestion/jobs/reembed_worker.py).
    "stopped_times_without_finishing_service_restarted": Message(
        "it stopped {job_attempts_1} times without finishing (the service restarted)",
        "更换向量模型中断了 {job_attempts_1} 次仍未完成（服务重启了）",
    ),
    "internal_error_stopped_service_log_has": Message(
        "an internal error stopped it; the service log has the details",
        "内部错误中止了向量模型的更换，详情见服务日志",
    ),
    # {phrase} stays English: the HTTP status's reason phrase (Not Found reads in Chinese, being
    # catalogued below).
    "page_answered_error": Message(
        "the page at {shown} answered {response_status_code} an error",
        "网页 {shown} 返回了错误 {response_status_code}",
    ),
    "page_answered": Message(
        "the page at {shown} answered {response_status_code} {phrase}",
        "网页 {shown} 返回了 {response_status_code} {phrase}",
    ),
    # A page of a type that cannot be taken in (its content type, or none declared).
    "page_no_content_type_only_web": Message(
        "the page at {shown} is no content type; only web pages (HTML), plain text, PDF, Word (.docx), spreadsheets (.xlsx, .xls, .csv) and PowerPoint (.pptx) can be ingested",
        "网页 {shown} 没有声明内容类型：只能导入网页（HTML）、纯文本、PDF、Word（.docx）、电子表格（.xlsx、.xls、.csv）和 PowerPoint（.pptx）",
    ),
    "page_only_web_pages_html_plain": Message(
        "the page at {shown} is {named}; only web pages (HTML), plain text, PDF, Word (.docx), spreadsheets (.xlsx, .xls, .csv) and PowerPoint (.pptx) can be ingested",
        "网页 {shown} 的类型是 {named}：只能导入网页（HTML）、纯文本、PDF、Word（.docx）、电子表格（.xlsx、.xls、.csv）和 PowerPoint（.pptx）",
    ),
}
