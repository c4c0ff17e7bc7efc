"""Messages about datasets and documents over HTTP: the routes' own checks."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "zip_documents_are_named_their_paths": Message(
        "a .zip's documents are named by their paths inside it: leave 'name' empty",
        ".zip 压缩包中的文档以它们在包内的路径命名：请把名称字段留空",
    ),
    "cannot_take": Message(
        "cannot take in {filename}: {supported_types_sentence}",
        "无法导入 {filename}：{supported_types_sentence}",
    ),
    "content_must_not_be_blank": Message(
        "content must not be blank",
        "段落内容不能为空",
    ),
    "embedding_model_id_embedding_mode_id": Message(
        "embedding_model_id and embedding_mode_id name different models: send one",
        "embedding_model_id 和 embedding_mode_id 指向不同的模型：请只提交其中一个",
    ),
    "query_text_must_not_be_blank": Message(
        "query_text must not be blank",
        "query_text 不能为空",
    ),
    "selector_not_supported_page_main_content": Message(
        "selector is not supported: a page's main content is found without one",
        "不支持指定选择器：网页的正文会自动识别",
    ),
    "send_least_one_title_content_active": Message(
        "send at least one of title, content or is_active",
        "请至少提交标题、内容或 is_active 中的一项",
    ),
    "send_document_application_json_multipart_form": Message(
        "send the document as application/json or as multipart/form-data with a file",
        "请以 application/json 提交文档，或以带文件的 multipart/form-data 提交",
    ),
    "source_url_list_not_http_s": Message(
        "source_url_list[{index}] is not an http(s) address: {url_200}",
        "source_url_list 中序号为 {index} 的地址不是 HTTP 或 HTTPS 地址：{url_200}",
    ),
    "sync_type_must_be_replace_sync": Message(
        "sync_type must be replace: a sync keeps the paragraphs that did not change; to start a document over, delete it and import it again",
        "sync_type 只支持替换方式：同步会保留没有变化的段落；要从头导入某个文档，请先删除它，再重新导入",
    ),
    "file_larger_upload_limit_mib_kb": Message(
        "the file is larger than the upload limit of {limit_mib} MiB (KB_UPLOAD_MAX_MB)",
        "文件超过了 {limit_mib} MiB 的上传上限（KB_UPLOAD_MAX_MB）",
    ),
    "form_field_keep_table_must_be": Message(
        "the form field 'keep_tables' must be true or false",
        "表单字段 keep_tables 须为 true 或 false",
    ),
    "form_field_name_must_be_text": Message(
        "the form field 'name' must be text of at most {max_name_chars} characters",
        "名称字段须为不超过 {max_name_chars} 个字符的文本",
    ),
    "form_field_pattern_must_be_text": Message(
        "the form field 'patterns' must be text",
        "分隔符字段须为文本",
    ),
    "form_field_must_be_whole_number": Message(
        "the form field {field} must be a whole number of characters or levels",
        "表单字段 {field} 须为整数（字符数或层级数）",
    ),
    "gateway_called_retrieval_service_before_resolving": Message(
        "the gateway called the retrieval service before resolving who is calling (a route the permission check let through unresolved)",
        "网关在确定调用方之前就调用了检索服务（权限检查放行了一个未确定调用方的路由）",
    ),
    "preview_needs_file_form_field_file": Message(
        "the preview needs a file in the form field 'file'",
        "预览需要在文件字段中附带一个文件",
    ),
    "retrieval_service_answered_one_upload_other": Message(
        "the retrieval service answered one upload with other than one document",
        "检索服务对一次上传返回的文档数不是一个",
    ),
    "upload_needs_file_form_field_file": Message(
        "the upload needs a file in the form field 'file'",
        "上传需要在文件字段中附带一个文件",
    ),
    "larger_upload_limit_mib_kb_upload": Message(
        "{filename} is larger than the upload limit of {limit_mib} MiB (KB_UPLOAD_MAX_MB)",
        "{filename} 超过了 {limit_mib} MiB 的上传上限（KB_UPLOAD_MAX_MB）",
    ),
    # Uploads in flight (gateway/uploads.py; the retrieval service's budget and its stream).
    "server_receiving_many_uploads_can_once": Message(
        "the server is receiving as many uploads as it can at once (KB_UPLOAD_BUDGET_MB); nothing was stored: try again in a few seconds",
        "服务器同时接收的上传已达上限（KB_UPLOAD_BUDGET_MB），本次没有保存任何内容：请过几秒再试",
    ),
    "your_uploads_still_progress_hold_much": Message(
        "your uploads still in progress hold as much as one caller may at once (KB_UPLOAD_CALLER_MB); nothing was stored: try again once they have finished",
        "你尚未完成的上传已占满单个调用方同时可用的额度（KB_UPLOAD_CALLER_MB），本次没有保存任何内容：请等它们完成后再试",
    ),
    "service_busy_other_work_kind_try": Message(
        "the service is busy with other work of this kind; try again in a few seconds",
        "服务正忙于处理同类工作，请过几秒再试",
    ),
    "upload_body_did_not_arrive_within": Message(
        "the upload's body did not arrive within {seconds} seconds (KB_UPLOAD_BODY_SECONDS); nothing was stored",
        "上传的内容没有在 {seconds} 秒内送达（KB_UPLOAD_BODY_SECONDS），没有保存任何内容",
    ),
    "client_closed_connection_before_upload_arrived": Message(
        "the client closed the connection before its upload arrived; nothing was stored",
        "上传尚未送达，客户端就关闭了连接；没有保存任何内容",
    ),
    "retrieval_service_ended_upload_without_answer": Message(
        "the retrieval service ended an upload without an answer",
        "检索服务结束了一次上传，但没有给出结果",
    ),
    "retrieval_service_answered_upload_other_admission": Message(
        "the retrieval service answered an upload with other than its admission",
        "检索服务对一次上传的应答不是准许接收",
    ),
    "upload_starts_head_dataset_bytes_brings": Message(
        "an upload starts with its head: the dataset and the bytes it brings",
        "上传须以头部开始：目标知识库和它将发送的字节数",
    ),
    "file_bytes_come_after_name_send": Message(
        "a file's bytes come after its name: send a file part before its chunks",
        "文件的内容须在文件名之后发送：请先发送文件部分，再发送它的数据块",
    ),
    "upload_brings_more_bytes_head_declared": Message(
        "the upload brings more than the {self__allowed} bytes its head declared",
        "上传的内容超过了头部声明的 {self__allowed} 字节",
    ),
    "one_upload_brings_one_file_zip": Message(
        "one upload brings one file (a .zip for several documents)",
        "一次上传只能包含一个文件（多个文档请打包为 .zip）",
    ),
    "upload_needs_file": Message(
        "the upload needs a file",
        "上传需要附带一个文件",
    ),
    "preview_needs_file": Message(
        "the preview needs a file",
        "预览需要附带一个文件",
    ),
    "one_preview_takes_most_files": Message(
        "one preview takes at most {max_previewed_files} files",
        "一次预览最多接受 {max_previewed_files} 个文件",
    ),
    "declared_bytes_must_be_size_upload": Message(
        "declared_bytes must be the size of the upload, more than 0",
        "declared_bytes 须为上传的大小，且大于 0",
    ),
    "upload_declares_bytes_one_upload_may": Message(
        "the upload declares {declared} bytes; one upload may bring at most {allowed_mib} MiB with its form fields (KB_UPLOAD_MAX_MB)",
        "上传声明了 {declared} 字节；一次上传连同表单字段最多 {allowed_mib} MiB（KB_UPLOAD_MAX_MB）",
    ),
    # kbcore.document_types.SUPPORTED_TYPES_SENTENCE, which several refusals end with.
    "supported_types_markdown_md_markdown_text": Message(
        "supported types: Markdown (.md, .markdown), text (.txt), PDF with a text layer (.pdf), Word (.docx), Excel (.xlsx, .xls), CSV (.csv), web pages (.html, .htm), PowerPoint (.pptx), and a .zip of such files (one document each)",
        "支持的类型：Markdown（.md、.markdown）、纯文本（.txt）、带文字层的 PDF（.pdf）、Word（.docx）、Excel（.xlsx、.xls）、CSV（.csv）、网页文件（.html、.htm）、PowerPoint（.pptx），以及由这些文件打包的 .zip（每个文件为一个文档）",
    ),
    # {exc} stays English: the body parser's own description of what is wrong.
    "invalid_document_body": Message(
        "invalid document body: {exc}",
        "文档请求体无效：{exc}",
    ),
    # The web-page route's refusal of one address, with or without the others queued;
    # {error_message} is the page's own refusal (see Web pages).
    "source_url_list": Message(
        "source_url_list[{index}]: {error_message}",
        "source_url_list 中序号为 {index} 的地址：{error_message}",
    ),
    "source_url_list_other_were_queued": Message(
        "source_url_list[{index}]: {error_message}; the other {queued} were queued",
        "source_url_list 中序号为 {index} 的地址：{error_message}；其余 {queued} 个已加入导入队列",
    ),
    "source_url_list_2": Message(
        "source_url_list[{index}]: {error_message}{others}",
        "source_url_list 中序号为 {index} 的地址：{error_message}{others}",
    ),
    # The stream's step and field are English in the general form; the one sentence the gateway
    # makes of it is keyed whole.
    "retrieval_service_ended_loop_without_result": Message(
        "the retrieval service ended the loop without a result",
        "检索服务结束了多轮检索，但没有返回结果",
    ),
    "retrieval_service_ended_without": Message(
        "the retrieval service ended {what} without a {field}",
        "检索服务结束了 {what}，但没有返回 {field}",
    ),
}
