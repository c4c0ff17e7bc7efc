"""The words around an answer: the retrieval loop's stop reasons and live progress, a record's
status, the search modes and their scores, the offline model's verdicts, the rerank model, the
attached questions, a reasoning model's thinking, regenerating and voting. Keyed by proto
values where there are some, so a word can only exist for a value the protos define."""

from __future__ import annotations

from gateway.words.catalogue import Word, Words, named
from grpc_stubs.common.v1 import common_pb2
from kbcore.vocabulary import PART_VERDICT, RECORD_STATUS, SEARCH_MODE, STOP_REASON

# Every stop reason of the retrieval loop, in the words the trace and the CLI show.
STOP_REASONS = named(
    STOP_REASON,
    {
        common_pb2.STOP_REASON_SUFFICIENT: ("资料充分", "Enough evidence found"),
        common_pb2.STOP_REASON_MAX_ROUNDS: ("达到检索轮次上限", "Reached the most search rounds allowed"),
        common_pb2.STOP_REASON_DUPLICATE_QUERY: ("查询重复", "The next search would repeat an earlier one"),
        common_pb2.STOP_REASON_NO_NEW_EVIDENCE: ("未发现新增资料", "No new evidence found"),
        common_pb2.STOP_REASON_EVIDENCE_BUDGET: ("达到资料容量上限", "Reached the most evidence an answer can use"),
        common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY: ("无后续查询", "Nothing left to search for"),
        common_pb2.STOP_REASON_NO_DATASETS: ("未关联知识库", "No knowledge base is linked"),
        common_pb2.STOP_REASON_ASSESSMENT_ERROR: ("资料核验未完成", "The evidence check did not finish"),
    },
)
STOP_REASON_FALLBACK: Word = ("已完成", "Finished")
RECORD_STATUSES = named(
    RECORD_STATUS,
    {
        common_pb2.RECORD_STATUS_RUNNING: ("回答中", "Answering"),
        common_pb2.RECORD_STATUS_ANSWERED: ("已回答", "Answered"),
        common_pb2.RECORD_STATUS_FAILED: ("回答失败", "Failed"),
        common_pb2.RECORD_STATUS_STOPPED: ("已停止", "Stopped"),
        common_pb2.RECORD_STATUS_INTERRUPTED: ("已中断", "Interrupted"),
    },
)
SEARCH_MODES = named(
    SEARCH_MODE,
    {
        common_pb2.SEARCH_MODE_HYBRID: ("混合", "Hybrid"),
        common_pb2.SEARCH_MODE_VECTOR: ("向量", "Vector"),
        common_pb2.SEARCH_MODE_KEYWORD: ("关键词", "Keyword"),
    },
)
# What the offline model found for one part of the question (the record's ``parts``).
PART_VERDICTS = named(
    PART_VERDICT,
    {
        common_pb2.PART_VERDICT_VERIFIED: ("已核实", "Verified"),
        common_pb2.PART_VERDICT_NEAREST: ("仅最接近的资料", "Only the nearest evidence"),
        common_pb2.PART_VERDICT_UNVERIFIABLE: ("无法核实", "Could not be verified"),
    },
)

# What a paragraph's score is depends on the search that found it, and the three are not
# comparable: a hybrid (RRF) score of 0.03 is a top rank, not a 3 % similarity. A record saved
# before the mode was kept has the fallback: its scores' kind is unknown, so no claim is made.
SCORES: Words = {
    "labels": named(
        SEARCH_MODE,
        {
            common_pb2.SEARCH_MODE_VECTOR: ("相似度", "Similarity"),
            common_pb2.SEARCH_MODE_KEYWORD: ("关键词得分", "Keyword score"),
            common_pb2.SEARCH_MODE_HYBRID: ("融合排名分", "Fused rank score"),
        },
    ),
    "hints": named(
        SEARCH_MODE,
        {
            common_pb2.SEARCH_MODE_VECTOR: (
                "向量检索的余弦相似度：0 到 1，越大越相近",
                "Cosine similarity of the vector search: 0 to 1, higher is closer",
            ),
            common_pb2.SEARCH_MODE_KEYWORD: (
                "关键词检索（BM25）的相关性得分：只在同一次检索的结果之间可比",
                "Relevance score of the keyword search (BM25): comparable only within one search",
            ),
            common_pb2.SEARCH_MODE_HYBRID: (
                "混合检索的排名融合分（RRF，约 0.016–0.033）：由向量与关键词两路的排名合成，不是相似度",
                "Rank fusion score of the hybrid search (RRF, about 0.016–0.033): made from the vector and "
                "keyword ranks, not a similarity",
            ),
        },
    ),
    "fallback": ("得分", "Score"),
}

# An application's optional rerank model: its scores in the trace and its choice on the
# application form.
RERANK: Words = {
    "score": ("重排序得分", "Rerank score"),
    "score_hint": (
        "重排序模型对这段资料与查询相关性的打分：越大越相关，只在同一轮的候选之间可比",
        "How relevant the rerank model found this paragraph to the search: higher is more relevant, "
        "comparable only within one round",
    ),
    "row": ("重排序", "Rerank"),
    "reranked": ("已按重排序模型的得分排序", "Ordered by the rerank model's scores"),
    "failed": ("重排序失败，保留检索顺序：", "Reranking failed, the search order was kept: "),
    "model": ("重排序模型", "Rerank model"),
    "none": ("不使用重排序", "No reranking"),
}

# Questions attached to paragraphs: the trace's mark, the paragraph panel, the log's attach box.
QUESTIONS: Words = {
    "matched": ("经关联问题命中", "Found through an attached question"),
    "score": ("问题相似度", "Question similarity"),
    "matched_hint": (
        "访客的问法与运营人员关联到这个段落的问题几乎相同，所以先取这个段落；分数是两个问题的相似度",
        "The visitor asked almost exactly a question an operator attached to this paragraph, so it came "
        "first; the score is how similar the two questions are",
    ),
    "count": ("关联问题 {count}", "Attached questions: {count}"),
    "none": (
        "还没有关联问题。把访客真实的问法关联到这里，以后同样的问法会先找到这个段落。",
        "No attached questions yet. Attach the way visitors really ask, and the same question will find "
        "this paragraph first.",
    ),
    "placeholder": ("访客会怎么问（最多 256 字）", "How would a visitor ask? (at most 256 characters)"),
    "add": ("关联", "Attach"),
    "added": ("已关联，以后这样问会先找到这个段落。", "Attached: asking this way now finds this paragraph first."),
    "remove": ("移除", "Remove"),
    "removed": ("已移除这个问题。", "The question was removed."),
    "edit": ("改写", "Rewrite"),
    "save": ("保存", "Save"),
    "cancel": ("取消", "Cancel"),
    "saved": ("已保存，问题已重新向量化。", "Saved, and the question was embedded again."),
    "too_long": ("问题最多 256 个字。", "A question has at most 256 characters."),
    "empty": ("请先写下问题。", "Write the question first."),
    "from_log_title": ("把这个问题关联到段落", "Attach this question to a paragraph"),
    "from_log_hint": (
        "选一个能回答它的段落：以后访客这样问（或说法几乎相同），会先找到这个段落。找到的段落里没有，就用资料里的说法查找。",
        "Choose a paragraph that answers it: a visitor asking this way (or almost) will find that paragraph "
        "first. If none of the paragraphs found fits, search in the documents' own words.",
    ),
    "found": ("这次找到的段落", "Paragraphs found this time"),
    "search": ("查找段落", "Search paragraphs"),
    "search_placeholder": (
        "用资料里的说法查找，例如“乡村道路养护”",
        "Search in the documents' own words, for example “rural road upkeep”",
    ),
    "searched": ("查找结果", "Search results"),
    "nothing_found": ("没有找到段落，换个说法试试。", "No paragraph found: try other words."),
    "attach": ("关联此问题", "Attach this question"),
    "attached": ("已关联", "Attached"),
}

# A round that added no paragraph: the trace says why it was not assessed.
SKIPPED_ASSESSMENT: Word = (
    "未再评估：本轮没有新资料，沿用上一轮的判断",
    "Not assessed again: this round found nothing new, so the last round's verdict stands",
)
# A round the local evidence judge decided (every part verified, or follow-up queries of its own).
JUDGED_ASSESSMENT: Word = (
    "由本地证据核验判定，未调用模型评估",
    "Decided by the local evidence check, without asking the model",
)
# The chat page's button under the last answer (re_chat).
REGENERATE: Words = {
    "button": ("重新生成", "Regenerate"),
    "hint": (
        "用同一个问题重新回答，替换这条回答（原回答仍保留在对话日志中）",
        "Answer the same question again in place of this answer (the conversation log keeps the old one)",
    ),
}
# A reasoning model's thinking, collapsed above its answer.
THINKING: Words = {
    "summary": ("思考过程", "Thinking"),
    "live": ("思考中…", "Thinking…"),
}
# The heading above the numbered references an OpenAI client may ask to have appended.
REFERENCES_HEADING: Word = ("参考资料：", "References:")
# The chat page's up and down votes under an answer.
VOTES: Words = {
    "up": ("有帮助", "Helpful"),
    "down": ("没有帮助", "Not helpful"),
    "voted_up": ("已赞同", "You found this helpful"),
    "voted_down": ("已反对", "You found this not helpful"),
    "withdraw": ("再点一次可撤销", "Click again to take it back"),
    "reason_label": ("反对的原因", "Why it was not helpful"),
    "reason_placeholder": (
        "哪里不对？写下原因（可选，500 字以内）",
        "What was wrong? Say why (optional, up to 500 characters)",
    ),
    "send": ("提交", "Send"),
    "cancel": ("取消", "Cancel"),
    "failed": ("评价没有保存：", "The vote was not saved: "),
}

# One line per agent_status phase; {holes} are the payload's fields.
PROGRESS: dict[str, Word] = {
    "context": ("正在读取会话上下文…", "Reading the conversation so far…"),
    "compacting": ("上下文 token 超出预算，正在压缩…", "The conversation is over its token budget: compacting it…"),
    "retrieving": ("第 {round} 轮检索：{query}", "Search round {round}: {query}"),
    # Between a round's queries on its one line.
    "query_separator": ("；", "; "),
    "assessed_sufficient": ("资料已充分，准备回答…", "Enough evidence found, preparing the answer…"),
    "assessed_missing": ("继续查找资料：{missing}", "Still looking for: {missing}"),
    "assessed_unnamed_gap": ("继续查找资料…", "Still looking for evidence…"),
    # The last round: nothing more is searched, the answer is written from what was found.
    "assessed_stopped_missing": (
        "未找到全部资料（{missing}），按已找到的资料回答…",
        "Not everything was found ({missing}); answering from what was found…",
    ),
    "assessed_stopped_unnamed_gap": (
        "资料未能覆盖整个问题，按已找到的资料回答…",
        "The evidence does not cover the whole question; answering from what was found…",
    ),
    "generating": ("正在根据检索资料生成回答…", "Writing the answer from the evidence found…"),
}
