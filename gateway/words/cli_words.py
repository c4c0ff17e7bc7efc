"""The command-line client's own words: what ``python -m cli`` prints around the answer, the
ingestion and the evaluation, and the sentences it fails with. Its progress lines, stop reasons
and document statuses are the pages' words (``answer_words``, ``document_words``), so a person
reads the same phrase in the terminal as in the browser.

A count is a group of two templates, ``one`` and ``other``: English says "1 document" but
"3 documents", Chinese counts with a measure word ("3 个文档") and so says both the same way.
Option names (``--chat``) and values the CLI passes through are ``{holes}``, never words."""

from __future__ import annotations

from gateway.words.catalogue import Words

# Small words the other areas put between theirs.
COMMON: Words = {
    "yes": ("是", "yes"),
    "no": ("否", "no"),
    "none": ("（无）", "(none)"),
    "list_separator": ("、", ", "),
    "on": ("开启", "on"),
    "off": ("关闭", "off"),
}

# ``ask``: the chat it opened, and the saved record that ``--trace`` prints after the answer.
ASK: Words = {
    "chat_opened": (
        "对话：{chat_id}（追问请加 {option} {chat_id}）",
        "chat: {chat_id} (to follow up, add {option} {chat_id})",
    ),
    "trace_heading": ("── 检索轨迹 ──", "── Search trace ──"),
    "round": ("第 {round} 轮 · 查询：{queries}", "Round {round} · searches: {queries}"),
    "query_separator": (" ｜ ", " | "),
    "round_detail": (
        "    新增资料 {new} 段 · 资料充分：{sufficient}",
        "    new paragraphs: {new} · enough evidence: {sufficient}",
    ),
    "round_missing": (" · 缺少：{missing}", " · missing: {missing}"),
    "stop_reason": ("停止原因：{reason}", "Why it stopped: {reason}"),
    "unverified": ("未核实：{missing}", "Not verified: {missing}"),
    "rewritten": ("改写后的问题：{question}", "Question as searched: {question}"),
    "cited": ("引用文档：{documents}", "Cited documents: {documents}"),
    "cited_document": {
        "one": ("{name}（{count} 段）", "{name} ({count} paragraph)"),
        "other": ("{name}（{count} 段）", "{name} ({count} paragraphs)"),
    },
    "failed": ("{message}（代码 {code}）", "{message} (code {code})"),
    "failed_unsaid": ("回答失败（代码 {code}）", "the answer failed (code {code})"),
    "cut_short": ("回答尚未完成，数据流就结束了", "the answer stream ended before the answer was complete"),
    "frame_not_json": ("网关发来的数据帧不是 JSON：{frame}", "the gateway sent a frame that is not JSON: {frame}"),
    "frame_not_object": (
        "网关发来的数据帧不是 JSON 对象：{frame}",
        "the gateway sent a frame that is not a JSON object: {frame}",
    ),
}

# ``ingest``: the dataset it made, the bars' failures and the summary of what became searchable.
INGEST: Words = {
    "created": ("已创建知识库 {dataset_id}（{name}）", "created dataset {dataset_id} ({name})"),
    "failed": ("失败：{error}", "failed: {error}"),
    "documents": {
        "one": ("{count} 个文档", "{count} document"),
        "other": ("{count} 个文档", "{count} documents"),
    },
    "paragraphs": {
        "one": ("{count} 个段落", "{count} paragraph"),
        "other": ("{count} 个段落", "{count} paragraphs"),
    },
    "summary": ("知识库 {dataset_id}：{documents}，{paragraphs}", "dataset {dataset_id}: {documents}, {paragraphs}"),
    "queued": ("知识库 {dataset_id}：{documents}已排队", "dataset {dataset_id}: {documents} queued"),
    "failures": ("；{count} 个失败：{names}", "; {count} failed: {names}"),
    "not_there": ("{path} 既不是文件夹也不是文件", "{path} is neither a folder nor a file"),
    "no_match": (
        "没有可上传的文件：{path} 中没有与 {pattern} 匹配的文件",
        "nothing to upload: no file in {path} matches {pattern}",
    ),
    "no_documents": (
        "没有可上传的文件：{path} 中没有 {suffixes} 文件",
        "nothing to upload: no {suffixes} files in {path}",
    ),
    "no_id": ("网关创建了知识库，却没有返回它的 id", "the gateway created the dataset but sent no id"),
    "deleted": ("文档在导入过程中被删除了", "the document was deleted while it was being ingested"),
    "ended_as": ("导入结束时的状态为“{status}”", "ingestion ended as “{status}”"),
}

# ``preview``: the count of paragraphs under them, and the separators that cut nothing.
PREVIEW: Words = {
    "paragraphs": {
        "one": ("共 {count} 个段落", "{count} paragraph"),
        "other": ("共 {count} 个段落", "{count} paragraphs"),
    },
    "first_shown": ("（显示前 {shown} 个）", " (the first {shown} shown)"),
    "unused_separator": (
        "分隔符 {separator} 在 {name} 中没有切分任何内容",
        "separator {separator} cuts nothing in {name}",
    ),
}

# ``eval``: the table of recall by round, and the questions that missed gold.
EVALUATE: Words = {
    "questions": {
        "one": ("{count} 个问题", "{count} question"),
        "other": ("{count} 个问题", "{count} questions"),
    },
    "gold": {
        "one": ("{count} 条标准片段", "{count} gold snippet"),
        "other": ("{count} 条标准片段", "{count} gold snippets"),
    },
    "rounds": {
        "one": ("{count} 轮", "{count} round"),
        "other": ("{count} 轮", "{count} rounds"),
    },
    "heading": ("{questions}，{gold}，问题改写：{rewrite}", "{questions}, {gold}, rewriting {rewrite}"),
    "columns": ("轮次 | 召回率 | 找全标准片段的问题", "after round | recall | questions with every gold snippet"),
    "rounds_used": ("用到的轮次：{items}", "rounds used: {items}"),
    "rounds_item": ("{rounds}（{questions}）", "{rounds}: {questions}"),
    "stop_reasons": ("停止原因：{items}", "stop reasons: {items}"),
    "stop_reason_item": ("{reason}（{questions}）", "{reason}: {questions}"),
    "missed": ("未找全标准片段的问题：", "missed gold:"),
    "missed_case": ("  {case}：找到 {found}，共 {gold} 条", "  {case}: found {found} of {gold}"),
    "not_json": ("{path}:{line}：第 {column} 列起不是有效的 JSON", "{path}:{line}: not JSON (from column {column})"),
    "not_an_object": (
        "{path}:{line}：应为带 {field} 的 JSON 对象",
        "{path}:{line}: expected a JSON object with {field}",
    ),
    "no_questions": ("{path} 中没有问题", "{path} holds no questions"),
    "no_figures": ("网关没有返回评估结果", "the gateway answered the evaluation without figures"),
}

# What a failure is called on stderr, around the gateway's own sentence where it sent one (that
# sentence is already in the reader's language: the CLI asks for it with Accept-Language).
ERRORS: Words = {
    "line": ("错误：{message}", "error: {message}"),
    "http": ("HTTP {status}：{message}", "HTTP {status}: {message}"),
    "http_hinted": ("HTTP {status}：{message}\n{hint}", "HTTP {status}: {message}\n{hint}"),
    "sign_in": (
        "请登录运营页面（{page}），在“{menu}”中新建个人令牌，再把 {variable} 设为它。",
        "Sign in on the operator page ({page}), create a personal token under “{menu}”, and set {variable} to it.",
    ),
    "not_json": (
        "{method} {path}：网关的回答不是 JSON",
        "{method} {path}: the gateway answered with something that is not JSON",
    ),
    "unreachable": ("无法与 {url} 上的网关通信：{reason}", "cannot talk to the gateway at {url}: {reason}"),
    "cannot_connect": ("连接被拒绝或无法建立", "the connection was refused or could not be made"),
    "timed_out": ("等待超时", "it timed out"),
    "broken": ("通信中断（{kind}）", "the exchange broke off ({kind})"),
    "cannot_read": ("无法读取 {path}：{reason}", "cannot read {path}: {reason}"),
    "missing_file": ("文件不存在", "it does not exist"),
    "not_allowed": ("没有读取权限", "permission denied"),
    "is_folder": ("这是一个文件夹", "it is a folder"),
    "system": ("系统错误 {code}", "system error {code}"),
    "setting": (
        "环境变量 {name} 的值无法识别：{value}",
        "the environment variable {name} holds a value that cannot be read: {value}",
    ),
    "interrupted": ("已中断", "interrupted"),
}

CLI: Words = {
    "common": COMMON,
    "ask": ASK,
    "ingest": INGEST,
    "preview": PREVIEW,
    "evaluate": EVALUATE,
    "errors": ERRORS,
}
