"""Messages about the gateway's edge: connections, headers, hosts, origins and bodies."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "cross_origin_request_refused_page_may": Message(
        "cross-origin request refused: a page at {origin} may not change anything here (same-origin pages and clients that send no Origin may; trusted origins go in KB_CORS_ORIGINS)",
        "已拒绝跨域请求：{origin} 上的页面不能在这里修改任何内容（同源页面和不发送 Origin 请求头的客户端可以；可信的来源请加入 KB_CORS_ORIGINS）",
    ),
    "send_body_content_type_application_json": Message(
        "send the body as Content-Type: application/json (got none)",
        "请求体请以 Content-Type: application/json 发送（当前没有声明类型）",
    ),
    "send_body_content_type_application_json_2": Message(
        "send the body as Content-Type: application/json (got {declared})",
        "请求体请以 Content-Type: application/json 发送（收到的是 {declared}）",
    ),
    "request_body_larger": Message(
        "the request body is larger than {size_limit}",
        "请求体超过了 {size_limit}",
    ),
    "request_has_more_headers_server_accepts": Message(
        "the request has more headers than this server accepts (at most {self_edge_max_headers})",
        "请求头的数量超出了服务器允许的范围（最多 {self_edge_max_headers} 个）",
    ),
    "request_line_headers_are_larger_server": Message(
        "the request line and headers are larger than this server accepts (at most {kib} KiB)",
        "请求行和请求头超出了服务器允许的大小（最多 {kib} KiB）",
    ),
    "request_headers_did_not_arrive_within": Message(
        "the request's headers did not arrive within {seconds} seconds",
        "请求头没有在 {seconds} 秒内送达",
    ),
    "server_holds_many_connections_can_right": Message(
        "the server holds as many connections as it can right now; try again in a few seconds",
        "服务器当前的连接数已满，请过几秒再试",
    ),
    "gateway_does_not_answer_host_add": Message(
        "this gateway does not answer for host {host_header}; add the name to KB_ALLOWED_HOSTS if it is really this gateway's",
        "这个网关不响应主机名 {host_header}；如果它确实是这个网关的名称，请把它加入 KB_ALLOWED_HOSTS",
    ),
    "too_many_open_connections_your_address": Message(
        "too many open connections from your address (at most {per_address}); close some and try again",
        "来自你的地址的连接过多（最多 {per_address} 个），请关闭一些后再试",
    ),
    # The web framework's own words for a path or a method no route serves.
    "method_not_allowed": Message(
        "Method Not Allowed",
        "不支持这个请求方法",
    ),
    "not_found": Message(
        "Not Found",
        "未找到",
    ),
    "nothing_served_address": Message(
        "nothing is served at this address",
        "这个地址上没有任何内容",
    ),
    "address_does_not_accept_request_method": Message(
        "this address does not accept this request method",
        "这个地址不接受这种请求方法",
    ),
    # An answer that failed after it started (gateway.sse_wire.failed_answer), and a record whose
    # answering process stopped (kbcore.db.lease.INTERRUPTED_ERROR): what the page shows.
    "answer_failed": Message(
        "(the answer failed: {message})",
        "（回答失败：{message}）",
    ),
    "process_answering_stopped": Message(
        "the process answering it stopped",
        "回答它的进程已停止",
    ),
    # The HTTP API's own checks (gateway/routes/*.py).
    "most_sites_can_be_allowed_not": Message(
        "at most {max_sites} sites can be allowed, not {len_sites}",
        "最多只能允许 {max_sites} 个网站，而不是 {len_sites} 个",
    ),
    "not_site_give_origin_such_https": Message(
        "{shown} is not a site: give an origin such as https://www.example.com or a host such as *.example.com",
        "{shown} 不是网站：请填写 https://www.example.com 这样的源，或 *.example.com 这样的主机名",
    ),
    "application_has_no_share_link_yet": Message(
        "application {app_id} has no share link yet; create one with POST on this address",
        "应用 {app_id} 还没有分享链接，请对这个地址发送 POST 请求创建",
    ),
    "form_data_larger_kib_json": Message(
        "form_data is larger than {max_form_data_bytes_1024} KiB as JSON",
        "form_data 转成 JSON 后超过了 {max_form_data_bytes_1024} KiB",
    ),
    "must_be_0_like_1_oppose": Message(
        'must be "0" (like), "1" (oppose) or "-1" (cancel the vote)',
        '只能是 "0"（赞同）、"1"（反对）或 "-1"（撤销评价）',
    ),
    "send_least_one_access_token_reset": Message(
        "send at least one of access_token_reset, is_active, access_num, daily_cap, expires_at, white_active or white_list",
        "请至少提交 access_token_reset、is_active、access_num、daily_cap、expires_at、white_active 或 white_list 中的一项",
    ),
    "send_least_one_active_expires": Message(
        "send at least one of is_active or expires_at",
        "请至少提交 is_active 或 expires_at 中的一项",
    ),
    "show_source_application_setting_here_send": Message(
        "show_source is the application's setting here: send it with PUT /api/application/{{id}} instead",
        "这里的 show_source 是应用的设置：请改用 PUT /api/application/{{id}} 提交",
    ),
    "answer_stream_broke": Message(
        "the answer stream broke",
        "回答流中断了",
    ),
    "chat_service_ended_answer_before_started": Message(
        "the chat service ended the answer before it started",
        "对话服务在回答开始前就结束了",
    ),
    "operator_has_no_application_own_read": Message(
        "the operator has no application of its own: read one with GET /api/application/{{id}}, or sign in through a share link",
        "运营者没有自己的应用：请用 GET /api/application/{{id}} 读取某个应用，或通过分享链接登录",
    ),
}
