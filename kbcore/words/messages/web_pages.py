"""Messages about why a web page cannot be fetched."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "url_characters_long_most_are_accepted": Message(
        "the URL is {len_text} characters long; at most {max_url_length} are accepted",
        "网址长 {len_text} 个字符，最多接受 {max_url_length} 个",
    ),
    "host_was_not_found": Message(
        "the host {url_host} in {shown_url} was not found",
        "找不到 {shown_url} 中的主机 {url_host}",
    ),
    "page_redirects_more_times": Message(
        "the page at {shown_start} redirects more than {max_redirects} times",
        "网页 {shown_start} 的重定向超过了 {max_redirects} 次",
    ),
    "page_redirects_invalid_url": Message(
        "the page at {shown_start} redirects to an invalid URL",
        "网页 {shown_start} 重定向到了无效的网址",
    ),
    "page_could_not_be_fetched_connection": Message(
        "the page at {shown} could not be fetched: the connection failed",
        "无法抓取网页 {shown}：连接失败",
    ),
    "page_did_not_answer_within_s": Message(
        "the page at {shown} did not answer within {policy_timeout} s",
        "网页 {shown} 在 {policy_timeout} 秒内没有响应",
    ),
    "page_larger_limit": Message(
        "the page at {shown} is larger than the {size_max_bytes} limit",
        "网页 {shown} 超过了 {size_max_bytes} 的上限",
    ),
    "points_private_loopback_address_host_pages": Message(
        "{shown_url} points at a private or loopback address (host {url_host}); pages on private, loopback, link-local or reserved addresses are not allowed unless the operator lists the host or its network in {allow_setting}",
        "{shown_url} 指向私有或回环地址（主机 {url_host}）：不允许抓取私有、回环、链路本地或保留地址上的网页，除非运营者在 {allow_setting} 中列出这个主机或它所在的网段",
    ),
    "url_user_name_password_not_accepted": Message(
        "{shown}: a URL with a user name or password in it is not accepted",
        "{shown}：不接受带用户名或密码的网址",
    ),
    "only_http_https_pages_can_be": Message(
        "{shown}: only http:// and https:// pages can be fetched, not no scheme",
        "{shown}：只能抓取 http:// 和 https:// 网页，这个地址没有写协议",
    ),
    "only_http_https_pages_can_be_2": Message(
        "{shown}: only http:// and https:// pages can be fetched, not {scheme}",
        "{shown}：只能抓取 http:// 和 https:// 网页，不支持 {scheme}",
    ),
    "url_names_no_host": Message(
        "{shown}: the URL names no host",
        "{shown}：网址中没有主机名",
    ),
    "not_valid_url": Message(
        "{text_200} is not a valid URL",
        "{text_200} 不是有效的网址",
    ),
    # Why a connection failed is one of the four sentences below, each catalogued, so it reads in
    # Chinese inside the first.
    "tls_certificate_could_not_be_verified": Message(
        "the TLS certificate of {host} could not be verified",
        "无法验证 {host} 的 TLS 证书",
    ),
    "tls_handshake_failed": Message(
        "the TLS handshake with {host} failed",
        "与 {host} 的 TLS 握手失败",
    ),
    "connection_failed": Message(
        "the connection to {host} failed",
        "连接 {host} 失败",
    ),
    "page_could_not_be_reached": Message(
        "the page at {shown} could not be reached: {connect_reason_exc_url_host}",
        "无法访问网页 {shown}：{connect_reason_exc_url_host}",
    ),
    "refused_connection": Message(
        "{host} refused the connection",
        "{host} 拒绝了连接",
    ),
}
