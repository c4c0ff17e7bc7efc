"""Messages about the conversation log, the audit trail, improving an answer."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "visitor_cannot_export_application_log": Message(
        "a visitor cannot export an application's log",
        "访客不能导出应用的对话日志",
    ),
    "answer_longer_characters": Message(
        "answer is longer than {max_paragraph_content_chars} characters",
        "回答不能超过 {max_paragraph_content_chars} 个字符",
    ),
    "answer_must_not_be_empty_corrected": Message(
        "answer must not be empty: it is the corrected answer written into the dataset",
        "回答不能为空：它是要写入知识库的修正后的回答",
    ),
    "application_id_must_not_be_empty": Message(
        "application_id must not be empty",
        "application_id 不能为空",
    ),
    "dataset_does_not_exist_may_have": Message(
        "dataset {dataset_id} does not exist (it may have been deleted); choose another dataset",
        "知识库 {dataset_id} 不存在（可能已被删除），请选择其他知识库",
    ),
    "dataset_id_must_name_dataset_improvement": Message(
        "dataset_id must name the dataset the improvement is written into",
        "dataset_id 须指明改进内容要写入的知识库",
    ),
    "date_after_date": Message(
        "date_from ({first}) is after date_to ({last})",
        "date_from（{first}）晚于 date_to（{last}）",
    ),
    "format_must_be_one_got": Message(
        "format must be one of {join_export_types}, got {format_20}",
        "导出格式须为 {join_export_types} 之一，收到的是 {format_20}",
    ),
    "max_groups_must_be_between_1": Message(
        "max_groups must be between 1 and {max_groups}, got {max_groups2}",
        "max_groups 须在 1 到 {max_groups} 之间，收到的是 {max_groups2}",
    ),
    "only_operator_signed_users_granted_application": Message(
        "only the operator and signed-in users granted the application may read the conversation log",
        "只有运营者和获授权访问该应用的已登录用户可以查看对话日志",
    ),
    "page_size_must_be_between_1_2": Message(
        "page_size must be between 1 and {max_audit_page} (0 for {default_audit_page}), got {page_size}",
        "page_size 须在 1 到 {max_audit_page} 之间（填 0 表示 {default_audit_page}），收到的是 {page_size}",
    ),
    "question_longer_characters": Message(
        "question is longer than {max_paragraph_title_chars} characters",
        "问题不能超过 {max_paragraph_title_chars} 个字符",
    ),
    "since_must_be_earlier_until": Message(
        "since must be earlier than until",
        "开始时间须早于结束时间",
    ),
    "since_must_be_earlier_until_since": Message(
        "since must be earlier than until (since is inclusive, until exclusive)",
        "开始时间须早于结束时间（包含开始时间，不包含结束时间）",
    ),
    "sufficient_must_be_true_false_got": Message(
        "sufficient must be true or false, got {raw_40}",
        "“资料是否充分”的筛选值须为 true 或 false，收到的是 {raw_40}",
    ),
    "application_has_no_datasets_evaluate": Message(
        "the application has no datasets to evaluate",
        "这个应用没有关联知识库，无法评测",
    ),
    "dataset_did_not_confirm_new_document": Message(
        "the dataset did not confirm the new document; try again",
        "知识库没有确认新文档，请重试",
    ),
    "date_range_covers_days_most_are": Message(
        "the date range covers {span} days; at most {max_days} are allowed",
        "日期范围共 {span} 天，最多允许 {max_days} 天",
    ),
    "date_range_reversed_date_after_date": Message(
        "the date range is reversed: date_from {first_isoformat} is after date_to {last_isoformat}",
        "日期范围颠倒了：date_from {first_isoformat} 晚于 date_to {last_isoformat}",
    ),
    "search_text_most_characters_got": Message(
        "the search text is at most {max_text_chars} characters, got {len_text}",
        "搜索文字最多 {max_text_chars} 个字符，当前有 {len_text} 个",
    ),
    "unknown_value_s": Message(
        "unknown value(s) in {field}: {join_map_str_unknown}",
        "{field} 中有未知的取值：{join_map_str_unknown}",
    ),
    "unknown_one": Message(
        "unknown {field} {unknown_0_40}; one of: {join_known}",
        "未知的 {field} 取值 {unknown_0_40}，可选：{join_known}",
    ),
    "cannot_hold_unspecified_value_0": Message(
        "{field} cannot hold the unspecified value 0",
        "{field} 不能包含表示未指定的值 0",
    ),
    "must_be_day_written_yyyy_mm": Message(
        "{field} must be a day written YYYY-MM-DD between {earliest_day} and {latest_day}, got {value_40}",
        "{field} 须为 {earliest_day} 到 {latest_day} 之间、写成 YYYY-MM-DD 的日期，收到的是 {value_40}",
    ),
    "must_be_rfc_3339_time_such": Message(
        "{field} must be an RFC 3339 time such as 2026-01-31T00:00:00Z, got {shown}",
        "{field} 须为 RFC 3339 格式的时间，例如 2026-01-31T00:00:00Z，收到的是 {shown}",
    ),
    "needs_time_zone_z_offset_such": Message(
        "{field} needs a time zone (Z or an offset such as +08:00), got {shown}",
        "{field} 需要带时区（Z，或 +08:00 这样的时差），收到的是 {shown}",
    ),
    "must_be_rfc_3339_time_time": Message(
        "{name} must be an RFC 3339 time with a time zone, such as {time_example}",
        "{name} 须为带时区的 RFC 3339 时间，例如 {time_example}",
    ),
    # What could not be done when the retrieval service refused to write an improved answer.
    "retrieval_service_could_not_write_paragraph_2": Message(
        "the retrieval service could not write the paragraph",
        "检索服务未能写入段落",
    ),
}
