"""The operator page's words for an application's usage charts, its access credentials and the
registered model endpoints, in Chinese and English."""

from __future__ import annotations

from gateway.words.catalogue import Words

# The usage section: chart titles, and series names keyed by the usage route's fields (outcomes
# use the record-status words).
USAGE: Words = {
    "loading": ("正在统计…", "Counting…"),
    "totals": (
        "{days} 天：{questions} 个提问，{answered} 个已回答，共 {tokens} 个 token。",
        "{days} days: {questions} questions, {answered} answered, {tokens} tokens in all.",
    ),
    "none": ("这段时间没有记录。", "Nothing was recorded in this period."),
    "questions_chart": ("每日提问数", "Questions per day"),
    "chat_record_count": ("提问", "Questions"),
    "outcomes_chart": ("回答结果", "Outcomes"),
    "tokens_chart": ("Token 用量", "Tokens used"),
    "message_tokens": ("输入", "Input"),
    "answer_tokens": ("输出", "Output"),
    "times_chart": ("回答耗时（秒）", "Answer time (seconds)"),
    "p50_run_time": ("中位数", "Median"),
    "p95_run_time": ("P95", "P95"),
    "rounds_chart": ("平均检索轮次", "Average search rounds"),
    "mean_rounds": ("平均轮次", "Average rounds"),
    "insufficient_chart": ("资料不足率", "Share without enough evidence"),
    "insufficient_rate": ("资料不足", "Not enough evidence"),
    "votes_chart": ("用户评价", "Votes"),
    "star_num": ("赞同", "Helpful"),
    "trample_num": ("反对", "Not helpful"),
    "stop_reasons_chart": ("停止原因（整个时段）", "Stop reasons (whole period)"),
}

# The access credentials section: API keys (masked) and the share link, with their use, expiry
# and revoke/rotate controls, and the snippets that put the share link on another site.
CREDENTIALS: Words = {
    "title": ("访问凭据", "Access credentials"),
    "keys": ("API Key", "API keys"),
    "no_keys": ("还没有 API Key。", "No API keys yet."),
    "link": ("分享链接", "Share link"),
    "no_link": (
        "还没有分享链接：用上面的「生成分享链接」创建。",
        "No share link yet: make one with “Create share link” above.",
    ),
    "key": ("Key", "Key"),
    "active": ("状态", "Status"),
    "is_active": ("有效", "Active"),
    "revoked": ("已撤销", "Revoked"),
    "expired": ("已过期", "Expired"),
    "use_count": ("使用次数", "Uses"),
    "last_used_at": ("最近使用", "Last used"),
    "never_used": ("从未使用", "Never used"),
    "expires_at": ("有效期至", "Valid until"),
    "never_expires": ("永久", "No expiry"),
    "create_time": ("创建时间", "Created"),
    "access_num": ("每位访客每天可提问", "Questions per visitor per day"),
    "daily_cap": ("全部访客每天合计", "Questions per day, all visitors together"),
    "revoke": ("撤销", "Revoke"),
    "reactivate": ("恢复", "Reactivate"),
    "rotate": ("轮换", "Rotate"),
    "set_expiry": ("设置有效期", "Set expiry"),
    "clear_expiry": ("改为永久", "Remove expiry"),
    "save_caps": ("保存限额", "Save limits"),
    "revoke_confirm": (
        "撤销后，这个 API Key 的下一次调用即被拒绝（正在生成的回答会完成）。确定撤销吗？",
        "Once revoked, this API key's next call is refused (an answer being written still finishes). Revoke it?",
    ),
    "rotate_key_confirm": (
        "轮换后旧 Key 立即失效，新 Key 只显示一次。确定轮换吗？",
        "Rotating stops the old key at once, and the new key is shown only once. Rotate it?",
    ),
    "rotate_link_confirm": (
        "轮换后旧链接和通过它登录的访客立即失效。确定轮换吗？",
        "Rotating stops the old link and every visitor signed in through it at once. Rotate it?",
    ),
    "revoke_link_confirm": (
        "撤销后，分享链接无法再登录，已登录的访客也无法继续提问。确定撤销吗？",
        "Once revoked, nobody can sign in with the share link, and visitors already signed in cannot ask "
        "any more. Revoke it?",
    ),
    "new_key": (
        "新的 API Key（只显示这一次，请妥善保存）：",
        "The new API key (shown only this once: keep it safe):",
    ),
    "saved": ("已保存。", "Saved."),
    "expiry_past": ("有效期需要是将来的时间。", "The expiry must be in the future."),
    "caps_invalid": (
        "每位访客 1–100000 次，合计 1–10000000 次。",
        "Per visitor 1–100000 questions, all together 1–10000000.",
    ),
    "embed": ("放到网站上", "Put it on a web site"),
    "embed_bubble": (
        "聊天气泡（贴在网页的 </body> 之前；对方网站的内容安全策略需允许本站的 script-src 和 frame-src）",
        "Chat bubble (paste it before the page's </body>; the site's content security policy must allow "
        "this gateway in script-src and frame-src)",
    ),
    "embed_inline": ("嵌入页面的对话窗口（iframe）", "Chat window inside the page (iframe)"),
    "embed_title": ("知识库问答", "Knowledge base Q&A"),
    "sites_limited": ("只允许下列网站嵌入", "Only these sites may embed it"),
    "sites_hint": (
        "每行一个：https://www.example.com 这样的源，或 *.example.com 这样的主机名。不勾选时任何网站都可以嵌入；勾选而不填时只有本站可以。",
        "One per line: an origin such as https://www.example.com or a host such as *.example.com. Unticked, any "
        "site may embed it; ticked with none listed, only this gateway may.",
    ),
    "save_sites": ("保存网站", "Save sites"),
}

# The models section: registered model endpoints, their check, and the application form's
# choice of chat model.
MODELS: Words = {
    "title": ("模型", "Models"),
    "none": (
        "还没有登记模型：未选择模型的应用使用部署默认（环境变量）的模型。",
        "No models registered: an application without a chosen model uses the deployment's default "
        "(environment variables).",
    ),
    "first_run": (
        "还没有连接大模型：现在每个回答都来自离线抽取模型，只摘录资料原文。"
        "登记一个模型端点（{providers}），再在应用里选择它，回答就由模型撰写。",
        "No language model is connected yet: every answer now comes from the offline extractive model, "
        "which only quotes the documents. Register a model endpoint ({providers}) and choose it in an "
        "application, and a model writes the answers.",
    ),
    "first_run_action": ("登记模型", "Register a model"),
    "name": ("名称", "Name"),
    "provider": ("类型", "Type"),
    "api_base": ("Base URL", "Base URL"),
    "model_name": ("模型 ID", "Model ID"),
    "purpose": ("用途", "Purpose"),
    "api_key": ("API Key", "API key"),
    "key_hint": ("Key", "Key"),
    "no_key": ("无", "None"),
    "keep_key": ("留空则保持原 Key 不变", "Leave empty to keep the current key"),
    "key_for_new_address": (
        "Base URL 已改为另一个地址：请填写这个地址的 API Key（原 Key 只发往登记它时的地址）",
        "The Base URL now points elsewhere: give the API key for this address (the old key only goes to "
        "the address it was registered with)",
    ),
    "no_key_confirm": (
        "Base URL 已改为另一个地址，原 API Key 不会发往新地址。新地址不需要 API Key 吗？"
        "（确定：不带 Key 保存；取消：回去填写 Key）",
        "The Base URL now points elsewhere, and the old API key is not sent there. Does the new address "
        "need no API key? (OK: save without a key; Cancel: go back and give one)",
    ),
    "used_by": ("使用中的应用", "Used by"),
    "purposes": {
        "chat": ("对话", "Chat"),
        "auxiliary": ("辅助（改写/评估/摘要）", "Auxiliary (rewriting, assessing, summarising)"),
        "embedding": ("向量", "Embeddings"),
        "rerank": ("重排", "Rerank"),
    },
    "register": ("登记模型", "Register model"),
    "save": ("保存修改", "Save changes"),
    "cancel": ("取消编辑", "Cancel editing"),
    "edit": ("编辑", "Edit"),
    "check": ("检测", "Check"),
    "checking": ("正在检测…", "Checking…"),
    "check_ok": ("可用：", "Works: "),
    "check_failed": ("不可用：", "Does not work: "),
    "delete": ("删除", "Delete"),
    "delete_confirm": ("确定删除这个模型吗？", "Delete this model?"),
    "saved": ("已保存。", "Saved."),
    "deleted": ("已删除。", "Deleted."),
    "default_choice": ("部署默认模型", "The deployment's default model"),
    "missing_fields": ("请填写名称、Base URL 和模型 ID。", "Give a name, a Base URL and a model ID."),
}
