"""The operator page's audit trail for administrators. An action is shown by its name
(``dataset.delete``) beside its words in ``actions``, else words made of its verb and its
object kind ("删除" + "知识库"); a part without words leaves just the name."""

from __future__ import annotations

from gateway.words.catalogue import Words

AUDIT: Words = {
    "title": ("审计", "Audit"),
    "actor": ("操作人", "Who"),
    "actor_placeholder": ("用户名或 id", "Username or id"),
    "action": ("操作", "Action"),
    "action_placeholder": ("如 dataset. 或 user.create", "such as dataset. or user.create"),
    "object_id": ("对象 id", "Object id"),
    "since": ("从", "From"),
    "until": ("到", "To"),
    "search": ("查询", "Search"),
    "export": ("导出 CSV", "Export CSV"),
    "hint": (
        "记录每一次改动：谁、何时、从哪个地址、对哪个对象做了什么（不含密钥和文档内容）。操作按前缀匹配，最新的在前；导出最多 50000 条。",
        "Every change is recorded: who did what to which object, when and from which address (never keys or "
        "document content). Actions match by prefix, newest first; an export holds at most 50000 entries.",
    ),
    "empty": ("没有符合条件的记录。", "No entries match."),
    "loading": ("正在读取…", "Reading…"),
    "bad_range": ("开始时间需要早于结束时间。", "The start must come before the end."),
    "export_done": ("已导出 {exported} 条。", "Exported {exported} entries."),
    "export_cut": (
        "共 {total} 条，已导出最新的 {exported} 条。",
        "{total} entries match: exported the newest {exported}.",
    ),
    "prev": ("上一页", "Previous"),
    "next": ("下一页", "Next"),
    "page": ("第 {page} / {pages} 页，共 {total} 条", "Page {page} of {pages}, {total} entries"),
    "columns": {
        "time": ("时间", "Time"),
        "actor": ("操作人", "Who"),
        "address": ("地址", "Address"),
        "action": ("操作", "Action"),
        "object": ("对象", "Object"),
        "detail": ("详情", "Details"),
    },
    "actions": {
        "user.sign_in": ("登录", "Signed in"),
        "user.sign_in_failed": ("登录失败", "Sign-in failed"),
        "user.sign_out": ("退出登录", "Signed out"),
        "user.change_password": ("修改自己的密码", "Changed their own password"),
        "user.create_sign_in_link": ("生成登录链接", "Made a sign-in link"),
        "document.cancel": ("取消文档处理", "Cancelled a document's processing"),
        "record.improve": ("改进回答", "Improved an answer"),
    },
    "actor_kinds": {
        "user": ("用户", "Person"),
        "operator": ("管理员令牌", "Operator token"),
        "application": ("应用密钥", "Application key"),
        "visitor": ("访客", "Visitor"),
        "service": ("系统服务", "System service"),
        "anonymous": ("匿名", "Anonymous"),
    },
    "objects": {
        "dataset": ("知识库", "Knowledge base"),
        "document": ("文档", "Document"),
        "paragraph": ("段落", "Paragraph"),
        "application": ("应用", "Application"),
        "api_key": ("API Key", "API key"),
        "access_token": ("分享链接", "Share link"),
        "model": ("模型", "Model"),
        "user": ("用户", "Person"),
        "personal_token": ("个人令牌", "Personal token"),
        "record": ("对话记录", "Conversation record"),
        "question": ("关联问题", "Attached question"),
    },
    # An action without words of its own: its verb's words, then its object's.
    "verb_object": ("{verb}{object}", "{verb}: {object}"),
    "verbs": {
        "create": ("新建", "Created"),
        "add": ("添加", "Added"),
        "update": ("修改", "Changed"),
        "delete": ("删除", "Deleted"),
        "rotate": ("轮换", "Rotated"),
        "cancel": ("取消", "Cancelled"),
        "import": ("导入", "Imported"),
        "upload": ("上传", "Uploaded"),
        "improve": ("改进", "Improved"),
        "revoke": ("撤销", "Revoked"),
    },
}
