"""Messages about the general words of a refusal that carries none of its own, and faults."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "service_depends_failed_try_again_later": Message(
        "a service it depends on failed; try again later",
        "依赖的服务出错，请稍后再试",
    ),
    "internal_error_error_id_service_log": Message(
        "internal error (error id {error_id}); the service log has the details",
        "内部错误（错误 ID {error_id}），详情见服务日志",
    ),
    "internal_error_service_log_has_details": Message(
        "internal error; the service log has the details",
        "内部错误，详情见服务日志",
    ),
    # A failure whose cause is kept from its reader, with the id of the log line that has it
    # (kbcore.error_ids); the words before the id read in Chinese when catalogued.
    "error_id_service_log_has_details": Message(
        "{words} (error id {error_id}); the service log has the details",
        "{words}（错误 ID {error_id}），详情见服务日志",
    ),
    "internal_error": Message(
        "internal error",
        "内部错误",
    ),
    "exists_already": Message(
        "it exists already",
        "对象已存在",
    ),
    "missing_unknown_credentials": Message(
        "missing or unknown credentials",
        "缺少凭据，或凭据无效",
    ),
    "page_must_be_1_more_got": Message(
        "page must be 1 or more, got {page}",
        "页码须不小于 1，收到的是 {page}",
    ),
    "stored_data_cannot_be_used": Message(
        "stored data cannot be used",
        "保存的数据已无法使用",
    ),
    "call_was_cancelled": Message(
        "the call was cancelled",
        "调用已取消",
    ),
    "caller_may_not_do": Message(
        "the caller may not do this",
        "当前调用方无权进行这项操作",
    ),
    "database_unavailable_try_again_shortly": Message(
        "the database is unavailable; try again shortly",
        "数据库暂时不可用，请稍后再试",
    ),
    "input_longer_service_accepts": Message(
        "the input is longer than the service accepts",
        "输入内容超出了服务允许的长度",
    ),
    "quota_used_up": Message(
        "the quota is used up",
        "额度已用完",
    ),
    "request_cannot_be_done_present_state": Message(
        "the request cannot be done in the present state",
        "当前状态下无法完成这个请求",
    ),
    "request_collides_work_progress_try_again": Message(
        "the request collides with work in progress; try again",
        "请求与正在进行的操作冲突，请重试",
    ),
    "request_invalid": Message(
        "the request is invalid",
        "请求无效",
    ),
    "server_disk_full_nothing_was_written": Message(
        "the server's disk is full: nothing was written; free some space or ask the operator to",
        "服务器磁盘已满，未写入任何内容：请清理出一些空间，或请运营者清理",
    ),
    "service_did_not_answer_time": Message(
        "the service did not answer in time",
        "服务未能及时响应",
    ),
    "service_does_not_offer_call": Message(
        "the service does not offer this call",
        "服务不提供这个调用",
    ),
    "service_failed_unknown_way": Message(
        "the service failed in an unknown way",
        "服务出现了未知错误",
    ),
    "service_refused_request": Message(
        "the service refused the request",
        "服务拒绝了这次请求",
    ),
    "too_many_requests_try_again_later": Message(
        "too many requests; try again later",
        "请求过于频繁，请稍后再试",
    ),
    "what_request_names_does_not_exist": Message(
        "what the request names does not exist",
        "请求的对象不存在",
    ),
    "must_not_contain_nul_characters_2": Message(
        "{name} must not contain NUL characters",
        "{name} 不能包含 NUL 字符",
    ),
    # The gateway's lead before a backend's own words on an HTTP 503 (Refusal.http_lead); the words
    # after it read in Chinese when catalogued.
    "backend_service_unavailable": Message(
        "a backend service is unavailable",
        "后端服务不可用",
    ),
    "backend_service_unavailable_2": Message(
        "a backend service is unavailable: {shown}",
        "后端服务不可用：{shown}",
    ),
    # What a status grpc itself gave means (kbcore.rpc.own_words): its own text is never shown.
    "backend_service_did_not_answer_time": Message(
        "a backend service did not answer in time",
        "后端服务未能及时响应",
    ),
    "backend_service_failed": Message(
        "a backend service failed",
        "后端服务出错",
    ),
    # What could not be done, then why: an upstream service's words after what failed.
    "failed_because": Message(
        "{failed}: {words}",
        "{failed}：{words}",
    ),
    # One item and the rest of a list (kbcore.words.said.listed).
    "listed": Message(
        "{first}; {rest}",
        "{first}；{rest}",
    ),
}
