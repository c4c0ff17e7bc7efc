"""Messages about API keys, share links and their visitors, tokens, the permission table."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "api_key_does_not_exist_application": Message(
        "API key {key_id_64} does not exist in application {application_id}",
        "应用 {application_id} 中没有 API 密钥 {key_id_64}",
    ),
    "access_num_must_be_between_1": Message(
        "access_num must be between 1 and {max_access_num}, got {access_num}",
        "access_num 须在 1 到 {max_access_num} 之间，收到的是 {access_num}",
    ),
    "access_token_must_not_be_empty": Message(
        "access_token must not be empty",
        "access_token 不能为空",
    ),
    "application_api_key_share_link_visitor": Message(
        "an application API key or a share-link visitor may only chat; this needs the operator's token or a signed-in user allowed to do it",
        "应用的 API 密钥和分享链接的访客只能对话；这项操作需要运营者的令牌，或由有权限的已登录用户进行",
    ),
    "chat_does_not_exist_application": Message(
        "chat {chat_id} does not exist in application {application_id}",
        "应用 {application_id} 中没有对话 {chat_id}",
    ),
    "chat_id_must_not_be_empty": Message(
        "chat_id must not be empty",
        "chat_id 不能为空",
    ),
    "daily_cap_must_be_between_1": Message(
        "daily_cap must be between 1 and {max_daily_cap}, got {daily_cap}",
        "daily_cap 须在 1 到 {max_daily_cap} 之间，收到的是 {daily_cap}",
    ),
    "expires_must_be_rfc_3339_time": Message(
        "expires_at must be an RFC 3339 time such as 2027-01-31T00:00:00Z, got {shown}",
        "expires_at 须为 RFC 3339 格式的时间，例如 2027-01-31T00:00:00Z，收到的是 {shown}",
    ),
    "expires_must_be_future_got": Message(
        "expires_at must be in the future, got {shown}",
        "expires_at 须为将来的时间，收到的是 {shown}",
    ),
    "expires_must_be_within_ten_years": Message(
        "expires_at must be within ten years from now, got {shown}",
        "expires_at 须在从现在起十年以内，收到的是 {shown}",
    ),
    "expires_needs_time_zone_z_offset": Message(
        "expires_at needs a time zone (Z or an offset such as +08:00), got {shown}",
        "expires_at 需要带时区（Z，或 +08:00 这样的时差），收到的是 {shown}",
    ),
    "missing_credentials_send_authorization_bearer_token": Message(
        "missing credentials: send 'authorization: Bearer <token>' metadata",
        "缺少凭据：请在调用的元数据中发送 authorization: Bearer <令牌>",
    ),
    "missing_token_send_authorization_bearer_token": Message(
        "missing token: send Authorization: Bearer <token> (sign in with POST /api/user/login)",
        "缺少令牌：请发送 Authorization: Bearer <令牌>（可用 POST /api/user/login 登录获取）",
    ),
    "not_found_no_such_application_chat": Message(
        "not found: no such application, chat or record for this caller",
        "未找到：当前调用方没有这个应用、对话或对话记录",
    ),
    "share_link_does_not_exist_application": Message(
        "share link {access_token_64} does not exist in application {application_id}",
        "应用 {application_id} 中没有分享链接 {access_token_64}",
    ),
    "authorization_header_holds_no_token_send": Message(
        "the Authorization header holds no token: send Authorization: Bearer <token>",
        "Authorization 请求头中没有令牌：请发送 Authorization: Bearer <令牌>",
    ),
    "caller_not_identified": Message(
        "the caller is not identified",
        "无法识别调用方",
    ),
    "gateway_cannot_tell_which_route_request": Message(
        "the gateway cannot tell which route this request matched, so it refuses it",
        "网关无法确定这个请求匹配的是哪个路由，因此拒绝了它",
    ),
    "permission_table_reads_path_route_has": Message(
        "the permission table reads {value} from the path, and this route has no such parameter",
        "权限表要从路径中读取 {value}，但这个路由没有这个参数",
    ),
    "stored_api_key_cannot_be_decrypted": Message(
        "the stored API key cannot be decrypted (KB_SECRET_KEY or data/secret.key changed): enter the key again",
        "保存的 API 密钥无法解密（KB_SECRET_KEY 或 data/secret.key 已更改）：请重新填写密钥",
    ),
    "these_credentials_name_nobody_sign_again": Message(
        "these credentials name nobody: sign in again",
        "这个凭据不对应任何人，请重新登录",
    ),
    "api_key_has_expired_ask_application": Message(
        "this API key has expired; ask the application's operator to extend it or for a new one",
        "这个 API 密钥已过期，请联系应用的运营者延长有效期，或换发新的密钥",
    ),
    "api_key_was_revoked_ask_application": Message(
        "this API key was revoked; ask the application's operator for a new one",
        "这个 API 密钥已被撤销，请向应用的运营者索取新的密钥",
    ),
    "call_not_permission_table_so_nobody": Message(
        "this call is not in the permission table, so nobody may make it",
        "这个调用不在权限表中，因此任何人都不能调用",
    ),
    "method_not_open_accounts_permission_table": Message(
        "this method is not open to accounts: the permission table does not list it",
        "这个方法不对账号开放：权限表中没有列出它",
    ),
    "port_serves_only_knowledge_base_own": Message(
        "this port serves only the knowledge-base's own processes: the call carries no valid service credential",
        "这个端口只为知识库自身的进程服务：这次调用没有携带有效的服务凭据",
    ),
    "share_link_allows_questions_per_visitor": Message(
        "this share link allows {limit} questions per visitor per day; try again tomorrow",
        "这个分享链接每位访客每天最多提问 {limit} 次，请明天再试",
    ),
    "share_link_allows_questions_per_day": Message(
        "this share link allows {link_daily_cap} questions per day from all its visitors together; try again tomorrow",
        "这个分享链接的全部访客每天合计最多提问 {link_daily_cap} 次，请明天再试",
    ),
    "share_link_does_not_exist": Message(
        "this share link does not exist",
        "这个分享链接不存在",
    ),
    "share_link_has_expired_ask_whoever": Message(
        "this share link has expired; ask whoever shared it for a new link",
        "这个分享链接已过期，请向分享者索取新的链接",
    ),
    "share_link_was_switched_off_operator": Message(
        "this share link was switched off by its operator; ask whoever shared it for a new link",
        "这个分享链接已被运营者关闭，请向分享者索取新的链接",
    ),
    "token_not_one_deployment_issues_sign": Message(
        "this token is not one this deployment issues: sign in, or check the token sent",
        "这个令牌不是本部署签发的：请登录，或检查发送的令牌",
    ),
    "visitor_token_has_expired_open_share": Message(
        "this visitor token has expired; open the share link again",
        "访客令牌已过期，请重新打开分享链接",
    ),
    "visitor_token_no_longer_valid_expired": Message(
        "this visitor token is no longer valid (expired, replaced by newer visitors, or its share link was replaced); open the share link again",
        "访客令牌已失效（已过期、被更新的访客替换，或分享链接已更换），请重新打开分享链接",
    ),
    "too_many_sign_ins_address_try": Message(
        "too many sign-ins from this address; try again in a minute",
        "这个地址的登录次数过多，请一分钟后再试",
    ),
    "too_many_sign_ins_through_share": Message(
        "too many sign-ins through this share link; try again in a minute",
        "通过这个分享链接登录的次数过多，请一分钟后再试",
    ),
    "unknown_revoked_token": Message(
        "unknown or revoked token",
        "令牌无效或已被撤销",
    ),
    "not_permission_table_kbcore_permissions_table": Message(
        "{value} is not in the permission table (kbcore/permissions/table.py), so no one may call it",
        "{value} 不在权限表（kbcore/permissions/table.py）中，因此任何人都不能调用",
    ),
    # A change asking for the state a credential already has (services/chat/access/credential_admin.py):
    # one sentence per kind and state.
    "api_key_already_active_nothing_was": Message(
        "this API key is already active; nothing was changed",
        "这个 API 密钥已经是有效状态，未做任何修改",
    ),
    "api_key_already_revoked_nothing_was": Message(
        "this API key is already revoked; nothing was changed",
        "这个 API 密钥已经撤销，未做任何修改",
    ),
    "share_link_already_active_nothing_was": Message(
        "this share link is already active; nothing was changed",
        "这个分享链接已经是有效状态，未做任何修改",
    ),
    "share_link_already_revoked_nothing_was": Message(
        "this share link is already revoked; nothing was changed",
        "这个分享链接已经撤销，未做任何修改",
    ),
    # kbcore.permissions.check.refusal_text: its plain refusals, and each sentence its two f-strings
    # make (the object is a dataset or an application).
    "only_administrator_may_do": Message(
        "only an administrator may do this",
        "只有管理员可以进行这项操作",
    ),
    "only_administrator_editor_may_create_applications": Message(
        "only an administrator or an editor may create applications",
        "只有管理员或编辑者可以创建应用",
    ),
    "only_administrator_editor_may_create_datasets": Message(
        "only an administrator or an editor may create datasets",
        "只有管理员或编辑者可以创建知识库",
    ),
    "only_people_who_operate_knowledge_base": Message(
        "only people who operate the knowledge base may see its model endpoints",
        "只有运营这个知识库的人可以查看它的模型端点",
    ),
    "send_credentials_authorization_bearer_token": Message(
        "send credentials: Authorization: Bearer <token>",
        "请发送凭据：Authorization: Bearer <令牌>",
    ),
    "acts_person_own_account_sign_username": Message(
        "this acts on a person's own account: sign in with a username and password",
        "这项操作针对个人账号：请用用户名和密码登录",
    ),
    "application_not_among_those_your_account": Message(
        "this application is not among those your account may see",
        "这个应用不在你的账号可查看的范围内",
    ),
    "dataset_not_among_those_your_account": Message(
        "this dataset is not among those your account may see",
        "这个知识库不在你的账号可查看的范围内",
    ),
    "your_account_may_not_change_application": Message(
        "your account may not change this application: ask an administrator for editor access to it",
        "你的账号无权修改这个应用：请向管理员申请它的编辑权限",
    ),
    "your_account_may_not_change_dataset": Message(
        "your account may not change this dataset: ask an administrator for editor access to it",
        "你的账号无权修改这个知识库：请向管理员申请它的编辑权限",
    ),
}
