"""The operator page's words for signing in, the account strip, the password form, the people
an administrator manages and each person's own tokens. Roles are keyed by the values
``GET /api/user`` answers (kbcore.permissions.roles)."""

from __future__ import annotations

from gateway.words.catalogue import Words
from kbcore.permissions.roles import Kind, Role

ROLES: Words = {
    Role.ADMIN.value: ("管理员", "Administrator"),
    Role.EDITOR.value: ("编辑", "Editor"),
    Role.VIEWER.value: ("查看者", "Viewer"),
    Kind.OPERATOR.value: ("管理员令牌", "Operator token"),
}
ACCOUNT: Words = {
    "signin_title": ("登录知识库管理", "Sign in to manage the knowledge base"),
    "signin_hint": ("使用管理员为你创建的账号登录。", "Sign in with the account an administrator made for you."),
    "username": ("用户名", "Username"),
    "password": ("密码", "Password"),
    "signin": ("登录", "Sign in"),
    "signing_in": ("正在登录…", "Signing in…"),
    "use_token": ("使用令牌", "Use a token"),
    "use_password": ("改用用户名和密码", "Use a username and password instead"),
    "token": ("访问令牌", "Access token"),
    "token_placeholder": (
        "管理员令牌（KB_ADMIN_TOKEN）或个人令牌",
        "Operator token (KB_ADMIN_TOKEN) or a personal token",
    ),
    "token_hint": (
        "令牌只保存在当前标签页（关闭后失效），随请求以 Bearer 方式发送。",
        "The token is kept in this tab only (gone once it closes) and sent with each request as a Bearer token.",
    ),
    "save_token": ("使用此令牌", "Use this token"),
    "missing_fields": ("请填写用户名和密码。", "Give a username and a password."),
    "missing_token": ("请粘贴令牌。", "Paste a token."),
    "bad_credentials": (
        "用户名或密码不正确，或账号已停用。",
        "The username or password is wrong, or the account is switched off.",
    ),
    "too_many": ("尝试次数过多，请稍后再试。", "Too many tries: try again later."),
    "token_refused": ("这个令牌没有被接受，请检查后重新输入。", "This token was not accepted: check it and try again."),
    "expired": ("登录已失效，请重新登录。", "You were signed out: sign in again."),
    "signed_out": ("已退出登录。", "Signed out."),
    "redeeming": ("正在通过登录链接登录…", "Signing in with the sign-in link…"),
    "link_failed": (
        "这个登录链接无效、已被使用或已过期，请向管理员索取新的链接。",
        "This sign-in link is not valid, was used already or has expired: ask an administrator for a new one.",
    ),
    "account": ("当前账号", "Signed in as"),
    "change_password": ("修改密码", "Change password"),
    "set_password": ("设置密码", "Set a password"),
    "sign_out": ("退出登录", "Sign out"),
    "current_password": ("当前密码", "Current password"),
    "current_password_optional": (
        "当前密码（还没有密码则留空）",
        "Current password (leave empty if you have none yet)",
    ),
    "new_password": ("新密码", "New password"),
    "repeat_password": ("再次输入新密码", "New password again"),
    "save_password": ("保存密码", "Save password"),
    "skip": ("暂不设置", "Not now"),
    "cancel": ("取消", "Cancel"),
    "close": ("关闭", "Close"),
    "set_password_hint": (
        "你已通过一次性链接登录。设置密码后，下次可以用用户名和密码登录。",
        "You signed in with a one-time link. Set a password to sign in with your username and password next time.",
    ),
    "password_rule": ("密码需要 8–256 个字符。", "A password has 8–256 characters."),
    "password_mismatch": ("两次输入的密码不一致。", "The two passwords differ."),
    "password_saved": (
        "密码已保存，其他地方的登录已退出。",
        "Password saved; you were signed out everywhere else.",
    ),
    "wrong_password": ("当前密码不正确。", "The current password is wrong."),
    "refused": ("没有权限：当前账号不能进行这项操作。", "Not allowed: this account cannot do that."),
    "conflict": ("操作冲突：", "Conflict: "),
}
# The administrators' section for people.
USERS: Words = {
    "title": ("用户", "People"),
    "none": ("还没有其他用户。", "No one else yet."),
    "create_title": ("新建用户", "New person"),
    "username": ("用户名", "Username"),
    "password": ("初始密码", "First password"),
    "repeat_password": ("再次输入密码", "Password again"),
    "role": ("角色", "Role"),
    "datasets": ("可访问的知识库", "Knowledge bases they may use"),
    "applications": ("可访问的应用", "Applications they may use"),
    "no_datasets": ("还没有知识库。", "No knowledge bases yet."),
    "no_applications": ("还没有应用。", "No applications yet."),
    "admin_sees_all": (
        "管理员可以访问全部知识库和应用。",
        "An administrator may use every knowledge base and application.",
    ),
    "all_grants": ("全部知识库和应用", "Every knowledge base and application"),
    "create": ("创建用户", "Create"),
    "created": ("已创建用户：{username}", "Created: {username}"),
    "missing_username": ("请填写用户名。", "Give a username."),
    "active": ("启用", "Active"),
    "inactive": ("已停用", "Switched off"),
    "grants": (
        "{datasets} 个知识库 · {applications} 个应用",
        "Knowledge bases: {datasets} · applications: {applications}",
    ),
    "last_sign_in": ("最近登录：", "Last signed in: "),
    "never_signed_in": ("从未登录", "Never signed in"),
    "edit": ("编辑", "Edit"),
    "save": ("保存", "Save"),
    "cancel": ("取消", "Cancel"),
    "saved": ("已保存：{username}", "Saved: {username}"),
    "reset_password": ("重置密码", "Reset password"),
    "reset_hint": ("重置后，这个用户在各处的登录立即退出。", "Resetting signs this person out everywhere at once."),
    "password_reset": ("已重置 {username} 的密码。", "Reset the password of {username}."),
    "signin_link": ("生成登录链接", "Make a sign-in link"),
    "link_hint": (
        "一次性登录链接，{expires} 前有效，只能使用一次：",
        "A one-time sign-in link, valid until {expires} and for one use only:",
    ),
    "copy": ("复制", "Copy"),
    "copied": ("已复制", "Copied"),
    "copy_failed": ("无法自动复制，请手动选中复制。", "Could not copy: select it and copy it by hand."),
    "delete": ("删除", "Delete"),
    "delete_confirm": (
        "删除用户「{username}」？其登录和个人令牌立即失效。此操作无法撤销。",
        "Delete “{username}”? Their sign-ins and personal tokens stop working at once. This cannot be undone.",
    ),
    "deleted": ("已删除用户：{username}", "Deleted: {username}"),
}
# Each signed-in person's own tokens.
PERSONAL_TOKENS: Words = {
    "title": ("个人令牌", "Personal tokens"),
    "hint": (
        "用于脚本和命令行，以你的身份调用接口（Authorization: Bearer 令牌），权限与你的账号相同。",
        "For scripts and the command line, to call the API as you (Authorization: Bearer token), with your "
        "account's permissions.",
    ),
    "none": ("还没有个人令牌。", "No personal tokens yet."),
    "name": ("名称", "Name"),
    "name_placeholder": ("令牌用途，例如：夜间同步脚本", "What the token is for, such as: nightly sync script"),
    "expiry_choice": ("有效期至（可选）", "Valid until (optional)"),
    "expires_at": ("有效期至", "Valid until"),
    "create": ("生成令牌", "Make a token"),
    "new_token": (
        "新的个人令牌（只显示这一次，请妥善保存）：",
        "The new personal token (shown only this once: keep it safe):",
    ),
    "missing_name": ("请填写令牌名称。", "Give the token a name."),
    "expiry_past": ("有效期需要是将来的时间。", "The expiry must be in the future."),
    "create_time": ("创建时间", "Created"),
    "last_used": ("最近使用", "Last used"),
    "never_used": ("从未使用", "Never used"),
    "never_expires": ("永久", "No expiry"),
    "is_active": ("有效", "Active"),
    "revoked": ("已撤销", "Revoked"),
    "expired": ("已过期", "Expired"),
    "revoke": ("撤销", "Revoke"),
    "revoke_confirm": (
        "撤销令牌「{name}」？使用它的脚本将立即无法调用。",
        "Revoke the token “{name}”? Scripts using it stop working at once.",
    ),
    "revoked_done": ("已撤销：{name}", "Revoked: {name}"),
}
