"""Messages about users, passwords, sign-in, personal tokens, grants."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "personal_token_name_must_be_most": Message(
        "a personal token's name must be at most {max_name} characters long, got {len_name}",
        "个人令牌的名称最多 {max_name} 个字符，当前有 {len_name} 个",
    ),
    "personal_token_name_must_not_contain": Message(
        "a personal token's name must not contain control characters",
        "个人令牌的名称不能包含控制字符",
    ),
    "each_grant_must_name_kind_grant": Message(
        "each grant must name its kind: GRANT_KIND_DATASET or GRANT_KIND_APPLICATION",
        "每项授权都要指明类型：GRANT_KIND_DATASET 或 GRANT_KIND_APPLICATION",
    ),
    "enter_password": Message(
        "enter a password",
        "请输入密码",
    ),
    "grants_are_given_without_replace_grants": Message(
        "grants are given without replace_grants: set it to replace the user's grants",
        "提交了授权，却没有设置 replace_grants：要替换用户的授权，请设置它",
    ),
    "no_such_user": Message(
        "no such user",
        "没有这个用户",
    ),
    "role_must_be_role_admin_role": Message(
        "role must be ROLE_ADMIN, ROLE_EDITOR or ROLE_VIEWER, got {wire}",
        "角色须为 ROLE_ADMIN、ROLE_EDITOR 或 ROLE_VIEWER，收到的是 {wire}",
    ),
    "break_glass_operator_token_belongs_no": Message(
        "the break-glass operator token belongs to no user account: sign in as a user for sessions, passwords and personal tokens",
        "运营者的应急令牌不属于任何用户账号：登录会话、密码和个人令牌都需要以用户身份登录后使用",
    ),
    "current_password_not_right_nothing_was": Message(
        "the current password is not right; nothing was changed",
        "当前密码不正确，未做任何修改",
    ),
    "sign_code_must_not_be_empty": Message(
        "the sign-in code must not be empty",
        "登录码不能为空",
    ),
    "username_must_be_most_characters_long": Message(
        "the username must be at most {max_username} characters long, got {len_name}",
        "用户名最多 {max_username} 个字符，当前有 {len_name} 个",
    ),
    "username_must_not_be_empty_only": Message(
        "the username must not be empty or only spaces",
        "用户名不能为空，也不能只有空格",
    ),
    "username_must_not_contain_control_characters": Message(
        "the username must not contain control characters such as line breaks or tabs",
        "用户名不能包含换行、制表符等控制字符",
    ),
    "username_taken_already_choose_another": Message(
        "the username {username} is taken already; choose another",
        "用户名 {username} 已被占用，请换一个",
    ),
    "there_no_user_id": Message(
        "there is no user with id {user_id_64}",
        "没有 ID 为 {user_id_64} 的用户",
    ),
    "these_credentials_name_no_account": Message(
        "these credentials name no account",
        "这个凭据不对应任何账号",
    ),
    "account_deactivated_activate_before_sending_sign": Message(
        "this account is deactivated: activate it before sending it a sign-in link",
        "这个账号已停用：请先启用它，再为它生成登录链接",
    ),
    "account_deactivated_ask_administrator_activate_again": Message(
        "this account is deactivated; ask an administrator to activate it again",
        "这个账号已停用，请联系管理员重新启用",
    ),
    "call_presents_personal_token_not_session": Message(
        "this call presents a personal token, not a session: revoke it with RevokePersonalToken",
        "这次调用使用的是个人令牌，而不是登录会话：请用 RevokePersonalToken 撤销它",
    ),
    "last_active_administrator_make_another_user": Message(
        "this is the last active administrator: make another user an administrator first, or nobody could manage users any more",
        "这是最后一位启用中的管理员：请先把另一位用户设为管理员，否则将没有人能再管理用户",
    ),
    "personal_token_has_expired_create_new": Message(
        "this personal token has expired; create a new one",
        "这个个人令牌已过期，请新建一个",
    ),
    "personal_token_revoked_already_nothing_was": Message(
        "this personal token is revoked already; nothing was changed",
        "这个个人令牌已经撤销，未做任何修改",
    ),
    "personal_token_was_revoked_create_new": Message(
        "this personal token was revoked; create a new one",
        "这个个人令牌已被撤销，请新建一个",
    ),
    "session_has_ended_signed_out_password": Message(
        "this session has ended (signed out, or the password was changed); sign in again",
        "登录已失效（已退出登录，或密码已修改），请重新登录",
    ),
    "session_has_ended_was_signed_out": Message(
        "this session has ended: it was signed out; sign in again",
        "登录已失效：已退出登录，请重新登录",
    ),
    "session_has_ended_because_account_password": Message(
        "this session has ended because the account's password was changed; sign in again",
        "登录已失效：账号密码已修改，请重新登录",
    ),
    "session_has_ended_because_administrator_reset": Message(
        "this session has ended because an administrator reset the account's password; sign in with the new password",
        "登录已失效：管理员重置了账号密码，请用新密码登录",
    ),
    "session_has_ended_because_administrator_changed": Message(
        "this session has ended because an administrator changed the account's role; sign in again",
        "登录已失效：管理员修改了账号的角色，请重新登录",
    ),
    "session_has_ended_because_account_was": Message(
        "this session has ended because the account was deactivated; sign in again",
        "登录已失效：账号曾被停用，请重新登录",
    ),
    "personal_token_was_revoked_because_account": Message(
        "this personal token was revoked because the account's password was changed; create a new one",
        "这个个人令牌已被撤销：账号密码已修改，请新建一个",
    ),
    "personal_token_was_revoked_because_administrator": Message(
        "this personal token was revoked because an administrator reset the account's password; create a new one",
        "这个个人令牌已被撤销：管理员重置了账号密码，请新建一个",
    ),
    "personal_token_was_revoked_because_administrator_2": Message(
        "this personal token was revoked because an administrator changed the account's role; create a new one",
        "这个个人令牌已被撤销：管理员修改了账号的角色，请新建一个",
    ),
    "session_has_expired_sign_again": Message(
        "this session has expired; sign in again",
        "登录已过期，请重新登录",
    ),
    "sign_link_unknown_was_used_already": Message(
        "this sign-in link is unknown, was used already or has expired; ask an administrator for a new one",
        "这个登录链接无效、已被使用或已过期，请向管理员索取新的链接",
    ),
    "too_many_failed_sign_ins_username": Message(
        "too many failed sign-ins for this username from this address; try again in {minutes} min, or ask an administrator for a one-time sign-in link",
        "从这个地址登录这个用户名失败的次数过多：请 {minutes} 分钟后再试，或向管理员索取一次性登录链接",
    ),
    "too_many_failed_sign_ins_address": Message(
        "too many failed sign-ins from this address; try again in {minutes} min, or ask an administrator for a one-time sign-in link",
        "从这个地址登录失败的次数过多：请 {minutes} 分钟后再试，或向管理员索取一次性登录链接",
    ),
    "wrong_username_password": Message(
        "wrong username or password",
        "用户名或密码不正确",
    ),
    "you_have_no_personal_token_id": Message(
        "you have no personal token with id {token_id_64}",
        "你没有 ID 为 {token_id_64} 的个人令牌",
    ),
    # Which password (the password, the new password) is English in the general forms; the sentences
    # they make are keyed whole.
    "new_password_must_be_least_characters": Message(
        "the new password must be at least {min_password} characters long",
        "新密码至少需要 {min_password} 个字符",
    ),
    "new_password_must_be_most_characters": Message(
        "the new password must be at most {max_password} characters long, got {len_password}",
        "新密码最多 {max_password} 个字符，当前有 {len_password} 个",
    ),
    "password_must_be_least_characters_long": Message(
        "the password must be at least {min_password} characters long",
        "密码至少需要 {min_password} 个字符",
    ),
    "password_must_be_most_characters_long": Message(
        "the password must be at most {max_password} characters long, got {len_password}",
        "密码最多 {max_password} 个字符，当前有 {len_password} 个",
    ),
    "must_be_least_characters_long": Message(
        "{field} must be at least {min_password} characters long",
        "{field} 至少需要 {min_password} 个字符",
    ),
    "must_be_most_characters_long_got": Message(
        "{field} must be at most {max_password} characters long, got {len_password}",
        "{field} 最多 {max_password} 个字符，当前有 {len_password} 个",
    ),
    # A grant's kind (dataset, application) is English in the general forms; the sentences it makes
    # are keyed whole.
    "grant_application_id_must_be_most": Message(
        "a grant's application id must be at most {max_object_id} printable characters",
        "授权的应用 ID 最多 {max_object_id} 个可打印字符",
    ),
    "grant_dataset_id_must_be_most": Message(
        "a grant's dataset id must be at most {max_object_id} printable characters",
        "授权的知识库 ID 最多 {max_object_id} 个可打印字符",
    ),
    "grant_id_must_be_most_printable": Message(
        "a grant's {kind} id must be at most {max_object_id} printable characters",
        "授权的 {kind} ID 最多 {max_object_id} 个可打印字符",
    ),
    "each_grant_must_name_id_application": Message(
        "each grant must name the id of its application",
        "每项授权都要指明应用的 ID",
    ),
    "each_grant_must_name_id_dataset": Message(
        "each grant must name the id of its dataset",
        "每项授权都要指明知识库的 ID",
    ),
    "each_grant_must_name_id": Message(
        "each grant must name the id of its {kind}",
        "每项授权都要指明 {kind} 的 ID",
    ),
    # The HTTP API's own checks of account fields (gateway/routes/users.py), shown after the field's
    # name.
    "password_least_characters": Message(
        "a password is at least {min_password_chars} characters",
        "密码至少需要 {min_password_chars} 个字符",
    ),
    "password_most_characters": Message(
        "a password is at most {max_password_chars} characters",
        "密码最多 {max_password_chars} 个字符",
    ),
    "name_must_not_be_empty_only": Message(
        "name must not be empty or only spaces",
        "名称不能为空，也不能只有空格",
    ),
    "password_re_password_differ": Message(
        "password and re_password differ",
        "两次输入的密码不一致（re_password 与密码不同）",
    ),
    "send_least_one_role_active_datasets": Message(
        "send at least one of role, is_active, datasets or applications",
        "请至少修改一项：角色、is_active、可访问的知识库或可访问的应用",
    ),
    "username_must_be_most_characters": Message(
        "username must be at most {max_username_chars} characters",
        "用户名最多 {max_username_chars} 个字符",
    ),
    "username_must_not_be_empty_only_2": Message(
        "username must not be empty or only spaces",
        "用户名不能为空，也不能只有空格",
    ),
    # The field (username, name) is English in the general forms; the sentences they make are keyed
    # whole.
    "name_must_be_valid_unicode_text": Message(
        "name must be valid Unicode text",
        "名称必须是有效的 Unicode 文本",
    ),
    "name_must_not_contain_control_characters": Message(
        "name must not contain control characters such as NUL or a line break",
        "名称不能包含 NUL、换行等控制字符",
    ),
    "username_must_be_valid_unicode_text": Message(
        "username must be valid Unicode text",
        "用户名必须是有效的 Unicode 文本",
    ),
    "username_must_not_contain_control_characters_2": Message(
        "username must not contain control characters such as NUL or a line break",
        "用户名不能包含 NUL、换行等控制字符",
    ),
    "must_be_valid_unicode_text": Message(
        "{what} must be valid Unicode text",
        "{what} 必须是有效的 Unicode 文本",
    ),
    "must_not_contain_control_characters_such": Message(
        "{what} must not contain control characters such as NUL or a line break",
        "{what} 不能包含 NUL、换行等控制字符",
    ),
}
