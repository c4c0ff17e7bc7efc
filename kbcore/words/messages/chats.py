"""Messages about applications, chats and answers, the share page."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    # A field's refusal: the field's name comes before it (gateway.shapes.validation_words).
    "must_be_true_event_stream_or_false": Message(
        "must be true (the answer as an event stream) or false (the saved record as one JSON answer),"
        " a JSON boolean, not text, a number or null",
        "须为 JSON 布尔值 true（以事件流返回回答）或 false（以一个 JSON 返回保存的记录），不能是文本、数字或空值",
    ),
    "chat_name_most_characters_one_has": Message(
        "a chat's name is at most {max_name_chars} characters; this one has {len_title}",
        "对话名称最多 {max_name_chars} 个字符，当前有 {len_title} 个",
    ),
    "chat_name_must_not_be_empty": Message(
        "a chat's name must not be empty",
        "对话名称不能为空",
    ),
    "chat_name_must_not_contain_control": Message(
        "a chat's name must not contain control characters",
        "对话名称不能包含控制字符",
    ),
    "application_id_exists_already_choose_another": Message(
        "an application with id {application_id} exists already; choose another id",
        "ID 为 {application_id} 的应用已存在，请换一个 ID",
    ),
    "application_name_longer_200_characters": Message(
        "application name is longer than 200 characters",
        "应用名称不能超过 200 个字符",
    ),
    "application_name_must_not_be_empty": Message(
        "application name must not be empty",
        "应用名称不能为空",
    ),
    "application_does_not_exist": Message(
        "application {application_id} does not exist",
        "应用 {application_id} 不存在",
    ),
    "most_history_messages_got": Message(
        "at most {max_client_messages} history messages, got {len_messages}",
        "历史消息最多 {max_client_messages} 条，收到 {len_messages} 条",
    ),
    "before_record_id_must_not_be": Message(
        "before_record_id must not be negative",
        "before_record_id 不能为负数",
    ),
    "chat_does_not_exist": Message(
        "chat {chat_id} does not exist",
        "对话 {chat_id} 不存在",
    ),
    "dataset_setting_similarity_must_be_between": Message(
        "dataset_setting.similarity must be between 0 and 1, got {similarity}",
        "dataset_setting.similarity 须在 0 到 1 之间，收到的是 {similarity}",
    ),
    "dataset_setting_top_n_must_be": Message(
        "dataset_setting.top_n must be between 1 and {max_top_n}, got {top_n}",
        "dataset_setting.top_n 须在 1 到 {max_top_n} 之间，收到的是 {top_n}",
    ),
    "history_messages_must_come_user_assistant": Message(
        "history messages must come from the user or the assistant",
        "历史消息只能来自用户或助手",
    ),
    "message_must_not_be_empty": Message(
        "message must not be empty",
        "提问内容不能为空",
    ),
    "question_must_not_contain_control_characters": Message(
        "the question must not contain control characters other than tabs and line breaks; it has {code_point_found}",
        "问题不能包含制表符和换行以外的控制字符，其中有 {code_point_found}",
    ),
    "only_share_link_visitor_has_chat": Message(
        "only a share-link visitor has a chat list; an API key's or the operator's chats are in the conversation log",
        "只有分享链接的访客才有对话列表；API 密钥和运营者的对话在对话日志中",
    ),
    "page_must_be_between_1_got": Message(
        "page must be between 1 and {max_page}, got {request_page}",
        "页码须在 1 到 {max_page} 之间，收到的是 {request_page}",
    ),
    "page_size_must_be_between_1": Message(
        "page_size must be between 1 and {max_page_size}, got {request_page_size}",
        "page_size 须在 1 到 {max_page_size} 之间，收到的是 {request_page_size}",
    ),
    "record_does_not_exist_chat": Message(
        "record {record_id} does not exist in chat {chat_id}",
        "对话 {chat_id} 中没有对话记录 {record_id}",
    ),
    "record_id_must_be_number_between": Message(
        "record_id must be a number between 1 and {max_record_id}, got {raw_40}",
        "record_id 须为 1 到 {max_record_id} 之间的数字，收到的是 {raw_40}",
    ),
    "summarizing_chat_failed_after_merging_rounds": Message(
        "summarizing chat {chat_id} failed after merging {result_rounds} rounds (the watermark stays at revision {result_state_revision}): {result_failure}",
        "对话 {chat_id} 合并了 {result_rounds} 轮后摘要失败（水位仍在第 {result_state_revision} 版）：{result_failure}",
    ),
    "answer_could_not_be_saved_because": Message(
        "the answer could not be saved because the database is unavailable; ask again shortly",
        "数据库暂时不可用，回答未能保存，请稍后重新提问",
    ),
    "answer_could_not_be_saved_because_2": Message(
        "the answer could not be saved because the server's disk is full; free some space or ask the operator to, then ask again",
        "服务器磁盘已满，回答未能保存：请清理出一些空间（或请运营者清理）后重新提问",
    ),
    "answer_was_not_saved_chat_was": Message(
        "the answer was not saved: this chat was taken over by another process; ask again",
        "回答未保存：这个对话已被另一个进程接管，请重新提问",
    ),
    # The database refused a record for good (services/chat/answering/saving.py): what the caller
    # is told, and what the record keeps beside the answer's text; both with an error id.
    "answer_could_not_be_saved": Message(
        "the answer could not be saved",
        "回答未能保存",
    ),
    "saving_answer_failed_only_text_was": Message(
        "saving the answer failed: only its text was kept",
        "保存回答失败：只保留了回答的文字",
    ),
    "compaction_state_chat_corrupted_negative_counters": Message(
        "the compaction state of chat {chat_id} is corrupted (negative counters)",
        "对话 {chat_id} 的上下文压缩状态已损坏（计数为负）",
    ),
    "compaction_state_chat_corrupted_no_summary": Message(
        "the compaction state of chat {chat_id} is corrupted (no summary or watermark)",
        "对话 {chat_id} 的上下文压缩状态已损坏（缺少摘要或水位标记）",
    ),
    "compaction_state_chat_corrupted_rounds_are": Message(
        "the compaction state of chat {chat_id} is corrupted: {state_compacted_rounds} rounds are marked as compacted but their summary is empty",
        "对话 {chat_id} 的上下文压缩状态已损坏：有 {state_compacted_rounds} 轮标记为已压缩，但摘要为空",
    ),
    "model_returned_empty_summary": Message(
        "the model returned an empty summary",
        "模型返回的摘要为空",
    ),
    "reason_characters_long_most_are_allowed": Message(
        "the reason is {len_text} characters long; at most {max_reason_chars} are allowed",
        "原因有 {len_text} 个字符，最多允许 {max_reason_chars} 个",
    ),
    "answer_still_being_written_vote_once": Message(
        "this answer is still being written; vote once it has finished",
        "这条回答还在生成中，请等它完成后再评价",
    ),
    "chat_already_answering_question_being_compacted": Message(
        "this chat is already answering a question or being compacted; wait for it to finish or stop it",
        "这个对话正在回答问题或压缩上下文，请等它完成，或先停止它",
    ),
    "unknown_dataset_s": Message(
        "unknown dataset(s): {join_unknown}",
        "知识库不存在：{join_unknown}",
    ),
    "unknown_dataset_setting_search_mode": Message(
        "unknown dataset_setting.search_mode {search_search_mode}",
        "未知的 dataset_setting.search_mode：{search_search_mode}",
    ),
    "unknown_vote_use_vote_up_vote": Message(
        "unknown vote {vote}: use VOTE_UP, VOTE_DOWN, or VOTE_UNSPECIFIED to withdraw",
        "未知的评价 {vote}：请使用 VOTE_UP、VOTE_DOWN，或用 VOTE_UNSPECIFIED 撤销评价",
    ),
    # {listed} stays English: each dataset's name and the embedding model it uses
    # (kbcore.embedding_rule).
    "these_datasets_use_different_embedding_models": Message(
        "these datasets use different embedding models and cannot be searched together ({listed}): choose datasets of one embedding model, or change a dataset's model first",
        "这些知识库使用不同的向量模型，不能一起检索（{listed}）：请选择使用同一向量模型的知识库，或先更换其中某个知识库的模型",
    ),
    # An upstream service's refusal passed on (kbcore.rpc.error_mapping.from_upstream): what failed,
    # then the upstream's words.
    "upstream_service_failed": Message(
        "an upstream service failed: {error_details_or_error_code_name}",
        "上游服务出错：{error_details_or_error_code_name}",
    ),
    # ... and, with an error id, when the upstream's words were grpc's own (kbcore.rpc.own_words).
    "upstream_service_failed_2": Message(
        "an upstream service failed",
        "上游服务出错",
    ),
    "retrieval_service_could_not_write_paragraph": Message(
        "the retrieval service could not write the paragraph: {error_details_or_error_code_name}",
        "检索服务未能写入段落：{error_details_or_error_code_name}",
    ),
    # The share page's look (services/chat/share_page.py). The setting (title, placeholder,
    # disclaimer, prologue) is English in the general forms; the sentences each makes are keyed
    # whole.
    "suggested_question_most_characters_one_has": Message(
        "a suggested question is at most {max_suggested_question_chars} characters; one has {len_too_long}",
        "推荐问题最多 {max_suggested_question_chars} 个字符，其中一个有 {len_too_long} 个",
    ),
    "accent_colour_must_be_written_rrggbb": Message(
        "the accent colour must be written #rrggbb (such as #2563eb), not {message_accent_color_20}",
        "主色须写成 #RRGGBB（例如 #2563EB），不能是 {message_accent_color_20}",
    ),
    "disclaimer_most_characters_one_has": Message(
        "the disclaimer is at most {limit} characters; this one has {len_text}",
        "免责声明最多 {limit} 个字符，当前有 {len_text} 个",
    ),
    "disclaimer_must_not_contain_nul_characters": Message(
        "the disclaimer must not contain NUL characters",
        "免责声明不能包含 NUL 字符",
    ),
    "logo_most_kb": Message(
        "the logo is at most {max_logo_bytes_1024} KB",
        "标志图片最大 {max_logo_bytes_1024} KB",
    ),
    "logo_most_kb_one_has_kb": Message(
        "the logo is at most {max_logo_bytes_1024} KB; this one has {len_data_1024} KB",
        "标志图片最大 {max_logo_bytes_1024} KB，当前为 {len_data_1024} KB",
    ),
    "logo_must_be_png_jpeg_gif": Message(
        "the logo must be a PNG, JPEG, GIF or WebP image, not {media_type}",
        "标志图片须为 PNG、JPEG、GIF 或 WebP 格式，不能是 {media_type}",
    ),
    "logo_must_be_png_jpeg_gif_2": Message(
        "the logo must be a PNG, JPEG, GIF or WebP image, not {media_type} (an SVG can carry scripts)",
        "标志图片须为 PNG、JPEG、GIF 或 WebP 格式，不能是 {media_type}（SVG 图片可能携带脚本）",
    ),
    "logo_must_be_image_sent_data": Message(
        "the logo must be an image sent as a data: URL (data:image/png;base64,…)",
        "标志图片须以 data: URL 的形式发送（data:image/png;base64,…）",
    ),
    "logo_base64_text_damaged": Message(
        "the logo's base64 text is damaged",
        "标志图片的 base64 文本已损坏",
    ),
    "logo_bytes_are_not_image": Message(
        "the logo's bytes are not a {media_type_removeprefix_image_upper} image",
        "标志图片的内容不是 {media_type_removeprefix_image_upper} 图片",
    ),
    "opening_message_suggests_questions_lines_starting": Message(
        "the opening message suggests {len_questions} questions (its lines starting with '- '); at most {max_suggested_questions} fit on a page",
        "开场白列出了 {len_questions} 个推荐问题（以「- 」开头的行），一个页面最多放 {max_suggested_questions} 个",
    ),
    "placeholder_most_characters_one_has": Message(
        "the placeholder is at most {limit} characters; this one has {len_text}",
        "输入框提示最多 {limit} 个字符，当前有 {len_text} 个",
    ),
    "placeholder_must_be_one_line_text": Message(
        "the placeholder must be one line of text",
        "输入框提示只能是一行文字",
    ),
    "prologue_most_characters_one_has": Message(
        "the prologue is at most {limit} characters; this one has {len_text}",
        "开场白最多 {limit} 个字符，当前有 {len_text} 个",
    ),
    "prologue_must_not_contain_nul_characters": Message(
        "the prologue must not contain NUL characters",
        "开场白不能包含 NUL 字符",
    ),
    "title_most_characters_one_has": Message(
        "the title is at most {limit} characters; this one has {len_text}",
        "显示名称最多 {limit} 个字符，当前有 {len_text} 个",
    ),
    "title_must_be_one_line_text": Message(
        "the title must be one line of text",
        "显示名称只能是一行文字",
    ),
    "most_characters_one_has": Message(
        "the {name} is at most {limit} characters; this one has {len_text}",
        "{name} 最多 {limit} 个字符，当前有 {len_text} 个",
    ),
    "must_be_one_line_text": Message(
        "the {name} must be one line of text",
        "{name} 只能是一行文字",
    ),
    "must_not_contain_nul_characters": Message(
        "the {name} must not contain NUL characters",
        "{name} 不能包含 NUL 字符",
    ),
    "unknown_progress_mode": Message(
        "unknown progress mode {message_progress}",
        "未知的进度显示方式 {message_progress}",
    ),
    # Why a question's record ended without its answer, as the record keeps it.
    "client_went_away_before_answer_ended": Message(
        "the client went away before the answer ended",
        "回答结束前客户端已断开",
    ),
    "stopped_by_user": Message(
        "stopped by the user",
        "已被用户停止",
    ),
}
