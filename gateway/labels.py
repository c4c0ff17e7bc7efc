"""The words people read: Chinese labels for stop reasons, record statuses, search modes,
document statuses and source types, and the live progress wording. The only copy — the pages load it as
``/ui/labels.json`` and the CLI imports it. Keyed by proto values, so a label can only exist
for a value the protos define, and its wire name comes from the descriptors."""

from __future__ import annotations

from typing import Any

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.answer_notice import FORMER_LABELS, OFFLINE_LABEL
from kbcore.permissions.roles import Kind, Role
from kbcore.vocabulary import (
    DOCUMENT_STATUS,
    LOG_SOURCE,
    PART_VERDICT,
    RECORD_STATUS,
    SEARCH_MODE,
    STOP_REASON,
    SYNC_OUTCOME,
)

# Every stop reason of the retrieval loop, in the words the trace and the CLI show.
_STOP_REASONS = {
    common_pb2.STOP_REASON_SUFFICIENT: "资料充分",
    common_pb2.STOP_REASON_MAX_ROUNDS: "达到检索轮次上限",
    common_pb2.STOP_REASON_DUPLICATE_QUERY: "查询重复",
    common_pb2.STOP_REASON_NO_NEW_EVIDENCE: "未发现新增资料",
    common_pb2.STOP_REASON_EVIDENCE_BUDGET: "达到资料容量上限",
    common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY: "无后续查询",
    common_pb2.STOP_REASON_NO_DATASETS: "未关联知识库",
    common_pb2.STOP_REASON_ASSESSMENT_ERROR: "资料核验未完成",
}
_RECORD_STATUSES = {
    common_pb2.RECORD_STATUS_RUNNING: "回答中",
    common_pb2.RECORD_STATUS_ANSWERED: "已回答",
    common_pb2.RECORD_STATUS_FAILED: "回答失败",
    common_pb2.RECORD_STATUS_STOPPED: "已停止",
    common_pb2.RECORD_STATUS_INTERRUPTED: "已中断",
}
_SEARCH_MODES = {
    common_pb2.SEARCH_MODE_HYBRID: "混合",
    common_pb2.SEARCH_MODE_VECTOR: "向量",
    common_pb2.SEARCH_MODE_KEYWORD: "关键词",
}
# What the offline model found for one part of the question (the record's ``parts``).
_PART_VERDICTS = {
    common_pb2.PART_VERDICT_VERIFIED: "已核实",
    common_pb2.PART_VERDICT_NEAREST: "仅最接近的资料",
    common_pb2.PART_VERDICT_UNVERIFIABLE: "无法核实",
}
_DOCUMENT_STATUSES = {
    retrieval_pb.DOCUMENT_STATUS_QUEUED: "排队中",
    retrieval_pb.DOCUMENT_STATUS_PARSING: "解析中",
    retrieval_pb.DOCUMENT_STATUS_EMBEDDING: "向量化中",
    retrieval_pb.DOCUMENT_STATUS_READY: "已就绪",
    retrieval_pb.DOCUMENT_STATUS_FAILED: "失败",
    retrieval_pb.DOCUMENT_STATUS_CANCELLED: "已取消",
}
# What a web document's sync did, and what its last check found (document.source_state).
_SYNC_OUTCOMES = {
    retrieval_pb.SYNC_OUTCOME_UNCHANGED: "网页没有变化，未重新导入",
    retrieval_pb.SYNC_OUTCOME_QUEUED: "网页已更新：正在导入新版本，只向量化改动的段落",
    retrieval_pb.SYNC_OUTCOME_GONE: "网页已不存在（404）：文档保留上次的内容",
    retrieval_pb.SYNC_OUTCOME_FAILED: "网页暂时无法获取：文档保留上次的内容",
    retrieval_pb.SYNC_OUTCOME_BUSY: "文档正在导入，稍后再同步",
}
SOURCE_STATE_LABELS = {"gone": "网页已不存在", "unreachable": "网页无法获取"}
# Where a document came from: a file's source type (kbcore.document_types.SOURCE_TYPES; a test
# holds that each has a label), a web page by address, or paragraphs sent as JSON.
_SOURCE_TYPES = {
    "md": "Markdown",
    "txt": "文本",
    "pdf": "PDF",
    "docx": "Word",
    "xlsx": "Excel",
    "xls": "Excel（xls）",
    "csv": "CSV",
    "html": "网页文件",
    "pptx": "PowerPoint",
    "zip": "压缩包",
    "url": "网页",
    "paragraphs": "手动录入",
}

STOP_REASON_LABELS = {STOP_REASON.name(value): label for value, label in _STOP_REASONS.items()}
RECORD_STATUS_LABELS = {RECORD_STATUS.name(value): label for value, label in _RECORD_STATUSES.items()}
SEARCH_MODE_LABELS = {SEARCH_MODE.name(value): label for value, label in _SEARCH_MODES.items()}
PART_VERDICT_LABELS = {PART_VERDICT.name(value): label for value, label in _PART_VERDICTS.items()}
DOCUMENT_STATUS_LABELS = {DOCUMENT_STATUS.name(value): label for value, label in _DOCUMENT_STATUSES.items()}
SOURCE_TYPE_LABELS = dict(_SOURCE_TYPES)
SYNC_OUTCOME_LABELS = {SYNC_OUTCOME.name(value): label for value, label in _SYNC_OUTCOMES.items()}
STOP_REASON_FALLBACK = "已完成"

# What a paragraph's score is depends on the search that found it, and the three are not
# comparable: a hybrid (RRF) score of 0.03 is a top rank, not a 3 % similarity.
_SCORES = {
    common_pb2.SEARCH_MODE_VECTOR: ("相似度", "向量检索的余弦相似度：0 到 1，越大越相近"),
    common_pb2.SEARCH_MODE_KEYWORD: ("关键词得分", "关键词检索（BM25）的相关性得分：只在同一次检索的结果之间可比"),
    common_pb2.SEARCH_MODE_HYBRID: (
        "融合排名分",
        "混合检索的排名融合分（RRF，约 0.016–0.033）：由向量与关键词两路的排名合成，不是相似度",
    ),
}
SCORE_LABELS = {SEARCH_MODE.name(value): label for value, (label, _) in _SCORES.items()}
SCORE_HINTS = {SEARCH_MODE.name(value): hint for value, (_, hint) in _SCORES.items()}
# A record saved before the mode was kept: its scores' kind is unknown, so no claim is made.
SCORE_FALLBACK = "得分"
# An application's optional rerank model: its scores in the trace
# (gateway/static/trace.js) and its choice on the application form (admin-apps.js).
# Questions attached to paragraphs: the trace's mark, the paragraph panel, the log's attach box.
QUESTION_WORDS = {
    "matched": "经关联问题命中",
    "score": "问题相似度",
    "matched_hint": "访客的问法与运营人员关联到这个段落的问题几乎相同，所以先取这个段落；分数是两个问题的相似度",
    "count": "关联问题 {count}",
    "none": "还没有关联问题。把访客真实的问法关联到这里，以后同样的问法会先找到这个段落。",
    "placeholder": "访客会怎么问（最多 256 字）",
    "add": "关联",
    "added": "已关联，以后这样问会先找到这个段落。",
    "remove": "移除",
    "removed": "已移除这个问题。",
    "edit": "改写",
    "save": "保存",
    "cancel": "取消",
    "saved": "已保存，问题已重新向量化。",
    "too_long": "问题最多 256 个字。",
    "empty": "请先写下问题。",
    "from_log_title": "把这个问题关联到段落",
    "from_log_hint": "选一个能回答它的段落：以后访客这样问（或说法几乎相同），会先找到这个段落。找到的段落里没有，就用资料里的说法查找。",
    "found": "这次找到的段落",
    "search": "查找段落",
    "search_placeholder": "用资料里的说法查找，例如“乡村道路养护”",
    "searched": "查找结果",
    "nothing_found": "没有找到段落，换个说法试试。",
    "attach": "关联此问题",
    "attached": "已关联",
}

RERANK_WORDS = {
    "score": "重排序得分",
    "score_hint": "重排序模型对这段资料与查询相关性的打分：越大越相关，只在同一轮的候选之间可比",
    "row": "重排序",
    "reranked": "已按重排序模型的得分排序",
    "failed": "重排序失败，保留检索顺序：",
    "model": "重排序模型",
    "none": "不使用重排序",
}
# A round that added no paragraph: the trace says why it was not assessed.
SKIPPED_ASSESSMENT = "未再评估：本轮没有新资料，沿用上一轮的判断"
# A round the local evidence judge decided (every part verified, or follow-up queries of its own).
JUDGED_ASSESSMENT = "由本地证据核验判定，未调用模型评估"
# The chat page's button under the last answer (re_chat).
REGENERATE_WORDS = {
    "button": "重新生成",
    "hint": "用同一个问题重新回答，替换这条回答（原回答仍保留在对话日志中）",
}

# A reasoning model's thinking, collapsed above its answer (gateway/static/thinking.js).
THINKING_WORDS = {
    "summary": "思考过程",
    "live": "思考中…",
}
# The chat page's up and down votes under an answer (gateway/static/votes.js).
VOTE_WORDS = {
    "up": "有帮助",
    "down": "没有帮助",
    "voted_up": "已赞同",
    "voted_down": "已反对",
    "withdraw": "再点一次可撤销",
    "reason_label": "反对的原因",
    "reason_placeholder": "哪里不对？写下原因（可选，500 字以内）",
    "send": "提交",
    "cancel": "取消",
    "failed": "评价没有保存：",
}
# The operator page's usage section (gateway/static/admin-usage.js): chart titles, and series
# names keyed by the usage route's fields (outcomes use the record-status labels).
USAGE_WORDS = {
    "loading": "正在统计…",
    "totals": "{days} 天：{questions} 个提问，{answered} 个已回答，共 {tokens} 个 token。",
    "none": "这段时间没有记录。",
    "questions_chart": "每日提问数",
    "chat_record_count": "提问",
    "outcomes_chart": "回答结果",
    "tokens_chart": "Token 用量",
    "message_tokens": "输入",
    "answer_tokens": "输出",
    "times_chart": "回答耗时（秒）",
    "p50_run_time": "中位数",
    "p95_run_time": "P95",
    "rounds_chart": "平均检索轮次",
    "mean_rounds": "平均轮次",
    "insufficient_chart": "资料不足率",
    "insufficient_rate": "资料不足",
    "votes_chart": "用户评价",
    "star_num": "赞同",
    "trample_num": "反对",
    "stop_reasons_chart": "停止原因（整个时段）",
}

# The operator page's "访问凭据" section (gateway/static/admin-credentials.js): API keys
# (masked) and the share link, with their use, expiry and revoke/rotate controls.
CREDENTIAL_WORDS = {
    "title": "访问凭据",
    "keys": "API Key",
    "no_keys": "还没有 API Key。",
    "link": "分享链接",
    "no_link": "还没有分享链接：用上面的「生成分享链接」创建。",
    "key": "Key",
    "active": "状态",
    "is_active": "有效",
    "revoked": "已撤销",
    "expired": "已过期",
    "use_count": "使用次数",
    "last_used_at": "最近使用",
    "never_used": "从未使用",
    "expires_at": "有效期至",
    "never_expires": "永久",
    "create_time": "创建时间",
    "access_num": "每位访客每天可提问",
    "daily_cap": "全部访客每天合计",
    "revoke": "撤销",
    "reactivate": "恢复",
    "rotate": "轮换",
    "set_expiry": "设置有效期",
    "clear_expiry": "改为永久",
    "save_caps": "保存限额",
    "revoke_confirm": "撤销后，这个 API Key 的下一次调用即被拒绝（正在生成的回答会完成）。确定撤销吗？",
    "rotate_key_confirm": "轮换后旧 Key 立即失效，新 Key 只显示一次。确定轮换吗？",
    "rotate_link_confirm": "轮换后旧链接和通过它登录的访客立即失效。确定轮换吗？",
    "revoke_link_confirm": "撤销后，分享链接无法再登录，已登录的访客也无法继续提问。确定撤销吗？",
    "new_key": "新的 API Key（只显示这一次，请妥善保存）：",
    "saved": "已保存。",
    "expiry_past": "有效期需要是将来的时间。",
    "caps_invalid": "每位访客 1–100000 次，合计 1–10000000 次。",
    "embed": "放到网站上",
    "embed_bubble": "聊天气泡（贴在网页的 </body> 之前；对方网站的内容安全策略需允许本站的 script-src 和 frame-src）",
    "embed_inline": "嵌入页面的对话窗口（iframe）",
    "embed_title": "知识库问答",
}

# The operator page's "模型" section (gateway/static/admin-models.js): registered model
# endpoints, their check, and the application form's choice of chat model.
MODEL_WORDS = {
    "title": "模型",
    "none": "还没有登记模型：未选择模型的应用使用部署默认（环境变量）的模型。",
    "first_run": "还没有连接大模型：现在每个回答都来自离线抽取模型，只摘录资料原文。"
    "登记一个模型端点（{providers}），再在应用里选择它，回答就由模型撰写。",
    "first_run_action": "登记模型",
    "name": "名称",
    "provider": "类型",
    "api_base": "Base URL",
    "model_name": "模型 ID",
    "purpose": "用途",
    "api_key": "API Key",
    "key_hint": "Key",
    "no_key": "无",
    "keep_key": "留空则保持原 Key 不变",
    "key_for_new_address": "Base URL 已改为另一个地址：请填写这个地址的 API Key（原 Key 只发往登记它时的地址）",
    "no_key_confirm": "Base URL 已改为另一个地址，原 API Key 不会发往新地址。新地址不需要 API Key 吗？"
    "（确定：不带 Key 保存；取消：回去填写 Key）",
    "used_by": "使用中的应用",
    "purposes": {"chat": "对话", "auxiliary": "辅助（改写/评估/摘要）", "embedding": "向量", "rerank": "重排"},
    "register": "登记模型",
    "save": "保存修改",
    "cancel": "取消编辑",
    "edit": "编辑",
    "check": "检测",
    "checking": "正在检测…",
    "check_ok": "可用：",
    "check_failed": "不可用：",
    "delete": "删除",
    "delete_confirm": "确定删除这个模型吗？",
    "saved": "已保存。",
    "deleted": "已删除。",
    "default_choice": "部署默认模型",
    "missing_fields": "请填写名称、Base URL 和模型 ID。",
}

# The operator page's conversation log (gateway/static/admin-log.js): where a question came
# from (kb.chat.v1.LogSource), the filters' options, the table's pager and the export's outcome.
_LOG_SOURCES = {
    chat_pb.LOG_SOURCE_PAGE: "管理员页面",
    chat_pb.LOG_SOURCE_SHARE_LINK: "分享链接",
    chat_pb.LOG_SOURCE_API_KEY: "API Key",
    chat_pb.LOG_SOURCE_OPENAI_API: "OpenAI 接口",
}
LOG_SOURCE_LABELS = {LOG_SOURCE.name(value): label for value, label in _LOG_SOURCES.items()}
LOG_WORDS = {
    "all": "全部",
    "sources": LOG_SOURCE_LABELS,
    "unknown_source": "未记录",
    "votes": {"up": "赞同", "down": "反对"},
    "not_voted": "未评价",
    "sufficient": {"true": "充分", "false": "不充分"},
    "no_stop_reason": "无（未检索）",
    "open": "查看",
    "close": "收起",
    "record_title": "记录详情",
    "vote_reason": "评价原因：",
    "prev": "上一页",
    "next": "下一页",
    "page": "第 {page} / {pages} 页，共 {total} 条",
    "empty": "没有符合条件的记录。",
    "export_done": "已导出 {exported} 条记录。",
    "export_cut": "符合条件的记录共 {total} 条，超过导出上限：已导出最新的 {exported} 条。",
    # The offline model's notice an answer opens with: the answer column leaves it out (the
    # record's model already says which answered), the record itself keeps it.
    "answer_notices": [OFFLINE_LABEL, *FORMER_LABELS],
}

# The operator page's knowledge-gap report and its "improve this answer" form
# (gateway/static/admin-knowledge.js).
KNOWLEDGE_WORDS = {
    "count": "{count} 条记录",
    "gaps": "缺失的资料",
    "examples": "示例问题",
    "empty": "这段时间没有资料不足的提问。",
    "summary": "共分析 {records} 条资料不足的记录，分为 {groups} 组。",
    "improve_title": "改进这条回答",
    "dataset": "写入知识库",
    "question": "问题（段落标题）",
    "answer": "正确的回答（段落内容）",
    "save": "写入知识库",
    "saved": "已写入知识库“{dataset}”，之后的提问即可检索到这段回答。",
    "no_dataset": "请先选择一个知识库。",
    "no_answer": "请填写正确的回答。",
    "record_title": "记录详情",
    "close": "收起",
}

# The operator page's sign-in, its account strip and its password form
# (gateway/static/admin-signin.js, admin-account.js, admin-password.js; docs/access.md).
# Roles are keyed by the values GET /api/user answers (kbcore.permissions.roles).
ROLE_LABELS = {
    Role.ADMIN.value: "管理员",
    Role.EDITOR.value: "编辑",
    Role.VIEWER.value: "查看者",
    Kind.OPERATOR.value: "管理员令牌",
}
ACCOUNT_WORDS = {
    "signin_title": "登录知识库管理",
    "signin_hint": "使用管理员为你创建的账号登录。",
    "username": "用户名",
    "password": "密码",
    "signin": "登录",
    "signing_in": "正在登录…",
    "use_token": "使用令牌",
    "use_password": "改用用户名和密码",
    "token": "访问令牌",
    "token_placeholder": "管理员令牌（KB_ADMIN_TOKEN）或个人令牌",
    "token_hint": "令牌只保存在当前标签页（关闭后失效），随请求以 Bearer 方式发送。",
    "save_token": "使用此令牌",
    "missing_fields": "请填写用户名和密码。",
    "missing_token": "请粘贴令牌。",
    "bad_credentials": "用户名或密码不正确，或账号已停用。",
    "too_many": "尝试次数过多，请稍后再试。",
    "token_refused": "这个令牌没有被接受，请检查后重新输入。",
    "expired": "登录已失效，请重新登录。",
    "signed_out": "已退出登录。",
    "redeeming": "正在通过登录链接登录…",
    "link_failed": "这个登录链接无效、已被使用或已过期，请向管理员索取新的链接。",
    "account": "当前账号",
    "change_password": "修改密码",
    "set_password": "设置密码",
    "sign_out": "退出登录",
    "current_password": "当前密码",
    "current_password_optional": "当前密码（还没有密码则留空）",
    "new_password": "新密码",
    "repeat_password": "再次输入新密码",
    "save_password": "保存密码",
    "skip": "暂不设置",
    "cancel": "取消",
    "close": "关闭",
    "set_password_hint": "你已通过一次性链接登录。设置密码后，下次可以用用户名和密码登录。",
    "password_rule": "密码需要 8–256 个字符。",
    "password_mismatch": "两次输入的密码不一致。",
    "password_saved": "密码已保存，其他地方的登录已退出。",
    "wrong_password": "当前密码不正确。",
    "refused": "没有权限：当前账号不能进行这项操作。",
    "conflict": "操作冲突：",
}
# The operator page's "用户" section for administrators (gateway/static/admin-users.js).
USER_WORDS = {
    "title": "用户",
    "none": "还没有其他用户。",
    "create_title": "新建用户",
    "username": "用户名",
    "password": "初始密码",
    "repeat_password": "再次输入密码",
    "role": "角色",
    "datasets": "可访问的知识库",
    "applications": "可访问的应用",
    "no_datasets": "还没有知识库。",
    "no_applications": "还没有应用。",
    "admin_sees_all": "管理员可以访问全部知识库和应用。",
    "all_grants": "全部知识库和应用",
    "create": "创建用户",
    "created": "已创建用户：{username}",
    "missing_username": "请填写用户名。",
    "active": "启用",
    "inactive": "已停用",
    "grants": "{datasets} 个知识库 · {applications} 个应用",
    "last_sign_in": "最近登录：",
    "never_signed_in": "从未登录",
    "edit": "编辑",
    "save": "保存",
    "cancel": "取消",
    "saved": "已保存：{username}",
    "reset_password": "重置密码",
    "reset_hint": "重置后，这个用户在各处的登录立即退出。",
    "password_reset": "已重置 {username} 的密码。",
    "signin_link": "生成登录链接",
    "link_hint": "一次性登录链接，{expires} 前有效，只能使用一次：",
    "copy": "复制",
    "copied": "已复制",
    "copy_failed": "无法自动复制，请手动选中复制。",
    "delete": "删除",
    "delete_confirm": "删除用户「{username}」？其登录和个人令牌立即失效。此操作无法撤销。",
    "deleted": "已删除用户：{username}",
}
# The operator page's "个人令牌" for the signed-in user (gateway/static/admin-tokens.js).
PERSONAL_TOKEN_WORDS = {
    "title": "个人令牌",
    "hint": "用于脚本和命令行，以你的身份调用接口（Authorization: Bearer 令牌），权限与你的账号相同。",
    "none": "还没有个人令牌。",
    "name": "名称",
    "name_placeholder": "令牌用途，例如：夜间同步脚本",
    "expiry_choice": "有效期至（可选）",
    "expires_at": "有效期至",
    "create": "生成令牌",
    "new_token": "新的个人令牌（只显示这一次，请妥善保存）：",
    "missing_name": "请填写令牌名称。",
    "expiry_past": "有效期需要是将来的时间。",
    "create_time": "创建时间",
    "last_used": "最近使用",
    "never_used": "从未使用",
    "never_expires": "永久",
    "is_active": "有效",
    "revoked": "已撤销",
    "expired": "已过期",
    "revoke": "撤销",
    "revoke_confirm": "撤销令牌「{name}」？使用它的脚本将立即无法调用。",
    "revoked_done": "已撤销：{name}",
}

# The operator page's "审计" section for administrators (gateway/static/admin-audit.js): the audit
# trail (docs/access.md). An action is shown by its name (``dataset.delete``) beside its label in
# ``actions``, else one made of its verb and its object kind ("删除" + "知识库"); a part without
# a label leaves just the name.
AUDIT_WORDS = {
    "title": "审计",
    "actor": "操作人",
    "actor_placeholder": "用户名或 id",
    "action": "操作",
    "action_placeholder": "如 dataset. 或 user.create",
    "object_id": "对象 id",
    "since": "从",
    "until": "到",
    "search": "查询",
    "export": "导出 CSV",
    "hint": "记录每一次改动：谁、何时、从哪个地址、对哪个对象做了什么（不含密钥和文档内容）。操作按前缀匹配，最新的在前；导出最多 50000 条。",
    "empty": "没有符合条件的记录。",
    "loading": "正在读取…",
    "bad_range": "开始时间需要早于结束时间。",
    "export_done": "已导出 {exported} 条。",
    "export_cut": "共 {total} 条，已导出最新的 {exported} 条。",
    "prev": "上一页",
    "next": "下一页",
    "page": "第 {page} / {pages} 页，共 {total} 条",
    "columns": {
        "time": "时间",
        "actor": "操作人",
        "address": "地址",
        "action": "操作",
        "object": "对象",
        "detail": "详情",
    },
    "actions": {
        "user.sign_in": "登录",
        "user.sign_in_failed": "登录失败",
        "user.sign_out": "退出登录",
        "user.change_password": "修改自己的密码",
        "user.create_sign_in_link": "生成登录链接",
        "document.cancel": "取消文档处理",
        "record.improve": "改进回答",
    },
    "actor_kinds": {
        "user": "用户",
        "operator": "管理员令牌",
        "application": "应用密钥",
        "visitor": "访客",
        "service": "系统服务",
    },
    "objects": {
        "dataset": "知识库",
        "document": "文档",
        "paragraph": "段落",
        "application": "应用",
        "api_key": "API Key",
        "access_token": "分享链接",
        "model": "模型",
        "user": "用户",
        "personal_token": "个人令牌",
        "record": "对话记录",
    },
    "verbs": {
        "create": "新建",
        "add": "添加",
        "update": "修改",
        "delete": "删除",
        "rotate": "轮换",
        "cancel": "取消",
        "import": "导入",
        "upload": "上传",
        "improve": "改进",
        "revoke": "撤销",
    },
}

# One line per agent_status phase; {placeholders} are the payload's fields.
PROGRESS = {
    "context": "正在读取会话上下文…",
    "compacting": "Compacting context · 上下文 token 超出预算，正在压缩…",
    "retrieving": "第 {round} 轮检索：{query}",
    "assessed_sufficient": "资料已充分，准备回答…",
    "assessed_missing": "继续查找资料：{missing}",
    "assessed_unnamed_gap": "继续查找资料…",
    "generating": "正在根据检索资料生成回答…",
}


def stop_reason_label(name: str) -> str:
    return STOP_REASON_LABELS.get(name, STOP_REASON_FALLBACK)


def progress_line(status: dict[str, Any]) -> str | None:
    """The progress wording for one agent_status payload; None for a phase this build does not know."""
    phase = status.get("phase")
    if phase == "assessed":
        if status.get("sufficient"):
            return PROGRESS["assessed_sufficient"]
        return PROGRESS["assessed_missing" if status.get("missing") else "assessed_unnamed_gap"].format(**status)
    template = PROGRESS.get(str(phase))
    if template is None:
        return None
    return template.format_map(_Blank(status))


class _Blank(dict[str, Any]):
    """Formatting values: a field the payload lacks reads as '?', never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


def labels_json() -> dict[str, Any]:
    """What the pages load: every label and the progress wording."""
    return {
        "stop_reasons": STOP_REASON_LABELS,
        "stop_reason_fallback": STOP_REASON_FALLBACK,
        "record_statuses": RECORD_STATUS_LABELS,
        "search_modes": SEARCH_MODE_LABELS,
        "part_verdicts": PART_VERDICT_LABELS,
        "scores": {"labels": SCORE_LABELS, "hints": SCORE_HINTS, "fallback": SCORE_FALLBACK},
        "regenerate": REGENERATE_WORDS,
        "thinking": THINKING_WORDS,
        "document_statuses": DOCUMENT_STATUS_LABELS,
        "source_types": SOURCE_TYPE_LABELS,
        "sync_outcomes": SYNC_OUTCOME_LABELS,
        "source_states": SOURCE_STATE_LABELS,
        "progress": PROGRESS,
        "votes": VOTE_WORDS,
        "usage": USAGE_WORDS,
        "credentials": CREDENTIAL_WORDS,
        "log": LOG_WORDS,
        "knowledge": KNOWLEDGE_WORDS,
        "models": MODEL_WORDS,
        "rerank": RERANK_WORDS,
        "questions": QUESTION_WORDS,
        "skipped_assessment": SKIPPED_ASSESSMENT,
        "judged_assessment": JUDGED_ASSESSMENT,
        "account": ACCOUNT_WORDS,
        "roles": ROLE_LABELS,
        "users": USER_WORDS,
        "personal_tokens": PERSONAL_TOKEN_WORDS,
        "audit": AUDIT_WORDS,
    }
