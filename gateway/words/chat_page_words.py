"""The visitor chat page's own words: its fixed text (filled into chat.html as it is served), the
record and its trace, the visitor's chat list, the error sentences, and the embed bubble another
site shows. The page takes every word it shows from here or from the other areas, none inline."""

from __future__ import annotations

from gateway.words.catalogue import Words

# The page's fixed text, and what start-up and a new chat say when they cannot go on.
CHAT_PAGE: Words = {
    "title": ("知识库问答", "Knowledge base Q&A"),
    "new_chat": ("新对话", "New chat"),
    "storage_blocked": (
        "这个浏览器不允许嵌入的对话保存内容（阻止了第三方网站的存储）：可以照常提问，但刷新页面后会从新对话开始。",
        "This browser does not let an embedded chat keep anything (it blocks third-party storage): you can "
        "ask as usual, but a reload starts a new chat. ",
    ),
    "open_in_own_tab": ("在新标签页中打开对话", "Open the chat in a tab of its own"),
    "kept_there": ("，那里会保留对话。", ", where it is kept."),
    "empty": (
        "向知识库提问吧：回答会附上检索轨迹和引用文档。",
        "Ask the knowledge base: each answer comes with its search trace and the documents it cites.",
    ),
    "records": ("对话记录", "Conversation"),
    "question": ("问题", "Question"),
    "placeholder": ("输入问题，Enter 发送，Shift+Enter 换行", "Type a question: Enter sends, Shift+Enter adds a line"),
    "stop": ("停止", "Stop"),
    "send": ("发送", "Send"),
    "switch_language": ("以英文显示本页", "Show this page in Chinese"),
    "compacting_rounds": ("压缩 {rounds} 轮对话", "Compacting {rounds} earlier rounds"),
    "cannot_open_this_chat": ("无法打开这个对话。", "This chat could not be opened."),
    "cannot_start_chat": ("无法新建对话。", "A new chat could not be started."),
    "bad_share_link": (
        "分享链接无效或已失效，请向管理员索取新的链接。",
        "This share link is not valid or no longer works: ask the administrator for a new one.",
    ),
    "bad_address": (
        "页面地址不正确：请通过分享链接或应用的对话链接打开。",
        "This page's address is not right: open it from a share link or an application's chat link.",
    ),
    "cannot_open": ("无法打开对话。", "The chat could not be opened."),
}

# One question and its answer: what a record says besides the answer itself.
RECORD: Words = {
    "steps": ("检索过程", "Search steps"),
    "interrupted": (
        "已中断：服务重启时回答未完成，请重新提问。",
        "Interrupted: the service restarted before the answer was finished. Please ask again.",
    ),
    "running": ("仍在回答中…", "Still answering…"),
}

# How an answer was found: the trace under each answer, and its cited documents.
TRACE: Words = {
    "summary": ("检索轨迹 · {rounds} 轮 · {stop_reason}", "Search trace · rounds: {rounds} · {stop_reason}"),
    "stop_reason": ("停止原因：", "Why it stopped: "),
    "rewritten_question": ("检索问题：", "Searched for: "),
    "rewrite_failed": ("问题改写未完成：", "The question could not be rewritten: "),
    "still_missing": ("仍缺资料：", "Still missing: "),
    "no_search": ("本次回答没有进行检索。", "This answer did not search."),
    "round": ("第 {round} 轮", "Round {round}"),
    "queries": ("查询", "Searches"),
    "new_paragraphs": ("新增段落", "New paragraphs"),
    "paragraph_count": ("{count} 个", "{count}"),
    "evidence": ("累计资料", "Evidence so far"),
    "evidence_count": ("{count} 段", "{count} paragraphs"),
    "sufficient": ("资料充分", "Enough evidence"),
    "gap": ("缺口", "Gap"),
    "next_queries": ("后续查询", "Next searches"),
    "assessment": ("评估", "Assessment"),
    "parts": ("问题分项", "Parts of the question"),
    "no_context": ("未使用会话上下文", "No conversation context used"),
    "context": (
        "历史轮次 {recent_rounds} · 已压缩轮次 {compacted_rounds} · 估算 token {estimated_tokens} / {token_budget} · "
        "摘要版本 {revision}",
        "Recent rounds {recent_rounds} · compacted rounds {compacted_rounds} · estimated tokens "
        "{estimated_tokens} / {token_budget} · summary version {revision}",
    ),
    "question_tokens": ("提问 token {count}", "Question tokens {count}"),
    "answer_tokens": ("回答 token {count}", "Answer tokens {count}"),
    "search_time": ("检索用时 {time}", "Search time {time}"),
    "total_time": ("总用时 {time}", "Total time {time}"),
    "model": ("模型 {model}", "Model {model}"),
    "offline_model": ("（离线模型）", " (offline model)"),
    "citations": ("引用文档", "Cited documents"),
    "no_citations": ("没有引用文档。", "No documents cited."),
    "citation_count": (" · {count} 段", " · paragraphs: {count}"),
    "untitled_document": ("未命名文档", "Untitled document"),
    "sources": ("引用：", "Sources: "),
    "source_hint": ("查看引用段落", "Show the cited paragraphs"),
}

# A share-link visitor's own chats.
CHAT_HISTORY: Words = {
    "title": ("历史对话", "Chat history"),
    "close": ("关闭", "Close"),
    "untitled": ("（无标题）", "(untitled)"),
    "meta": ("{count} 个问题 · {time}", "Questions: {count} · {time}"),
    "rename": ("重命名", "Rename"),
    "delete": ("删除", "Delete"),
    "save": ("保存", "Save"),
    "cancel": ("取消", "Cancel"),
    "empty": (
        "还没有历史对话：提出第一个问题后，这里会列出来。",
        "No chats yet: once you ask a first question, your chats are listed here.",
    ),
    "read_failed": ("无法读取历史对话：{error}", "The chat list could not be read: {error}"),
    "new_title": ("新的对话标题", "New chat title"),
    "rename_failed": ("重命名失败：{error}", "Renaming failed: {error}"),
    "delete_confirm": (
        "删除对话「{title}」？删除后它不再出现在你的历史对话里。",
        "Delete the chat “{title}”? It will no longer appear in your chat history.",
    ),
    "delete_failed": ("删除失败：{error}", "Deleting failed: {error}"),
}

# What a refusal or a failure is called before the server's own sentence, by HTTP status.
ERRORS: Words = {
    "network": ("网络连接中断。", "The network connection was lost."),
    "busy": (
        "该会话正在回答上一个问题，请稍候或先停止。",
        "This chat is still answering the last question: wait a moment, or stop it first.",
    ),
    "quota": ("提问次数已用完：{detail}", "No questions left: {detail}"),
    "too_long": ("问题太长，请缩短后再问。", "The question is too long: shorten it and ask again."),
    "unavailable": (
        "模型或检索服务暂时不可用，请稍后重试。",
        "The model or the search service is unavailable for now: try again in a moment.",
    ),
    "refused": (
        "没有权限：请通过分享链接或 API Key 打开。",
        "Not allowed: open this page from a share link or with an API key.",
    ),
    "not_found": ("未找到：{detail}", "Not found: {detail}"),
    "failed": ("请求失败（HTTP {status}）", "The request failed (HTTP {status})"),
    "not_json": ("服务器的回答不是 JSON。", "The server's answer was not JSON."),
    "no_stream": ("浏览器无法读取回答的数据流。", "The browser could not read the answer's stream."),
}

# Small words any page puts between others.
COMMON: Words = {
    "yes": ("是", "Yes"),
    "no": ("否", "No"),
    "colon": ("：", ": "),
    "seconds": ("{seconds} 秒", "{seconds} s"),
}

# The chat bubble another site's page shows (embed.js), besides its default name (the page's
# title): what it tells the site's developer when its snippet is broken.
EMBED: Words = {
    "missing_token": (
        "知识库问答：嵌入代码缺少有效的 data-token（分享链接的访问令牌），未添加对话按钮。",
        "Knowledge base Q&A: the embed code has no valid data-token (the share link's access token), so no "
        "chat button was added.",
    ),
}
