"""Messages about search, hit test and evaluation."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "most_cases_per_evaluation_got": Message(
        "at most {max_cases} cases per evaluation, got {len_request_cases}",
        "每次评测最多 {max_cases} 个用例，收到 {len_request_cases} 个",
    ),
    "most_texts_can_be_grouped_once": Message(
        "at most {max_texts} texts can be grouped at once, got {len_texts}",
        "一次最多分组 {max_texts} 条文本，收到 {len_texts} 条",
    ),
    "cases_must_hold_least_one_question": Message(
        "cases must hold at least one question",
        "评测至少需要一个问题",
    ),
    "dataset_ids_must_name_least_one": Message(
        "dataset_ids must name at least one dataset",
        "dataset_ids 须至少指定一个知识库",
    ),
    "dataset_ids_must_name_least_one_2": Message(
        "dataset_ids must name at least one dataset to evaluate against",
        "dataset_ids 须至少指定一个用于评测的知识库",
    ),
    "query_longer_characters": Message(
        "query is longer than {max_search_query_chars} characters",
        "查询文字不能超过 {max_search_query_chars} 个字符",
    ),
    "query_must_not_be_empty": Message(
        "query must not be empty",
        "查询文字不能为空",
    ),
    "question_must_not_be_empty": Message(
        "question must not be empty",
        "问题不能为空",
    ),
    "similarity_must_be_between_0_1": Message(
        "similarity must be between 0 and 1, got {similarity}",
        "相似度须在 0 到 1 之间，收到的是 {similarity}",
    ),
    "text_longer_characters": Message(
        "text {too_long_0} is longer than {max_text_chars} characters",
        "序号为 {too_long_0} 的文本超过了 {max_text_chars} 个字符",
    ),
    "texts_must_hold_least_one_text": Message(
        "texts must hold at least one text",
        "至少需要一条文本",
    ),
    "question_longer_estimated_tokens": Message(
        "the question is longer than {max_question_tokens} estimated tokens",
        "问题超过了 {max_question_tokens} 个 token（估算）",
    ),
    "top_n_must_be_between_1": Message(
        "top_n must be between 1 and {max_top_n}, got {top_n}",
        "top_n 须在 1 到 {max_top_n} 之间，收到的是 {top_n}",
    ),
    "unknown_search_mode": Message(
        "unknown search_mode {message_search_mode}",
        "未知的 search_mode：{message_search_mode}",
    ),
    # Why one case cannot be scored (services/retrieval/search/evaluation.py case_problem). The
    # refusal joins the first few with "; ": a single problem reads in Chinese, several joined ones
    # keep the later ones' English.
    "case_gold_snippet_empty_would_match": Message(
        "case {case_id_or_index_1}: a gold snippet is empty (it would match any evidence)",
        "用例 {case_id_or_index_1}：有一个标准答案片段为空（它会匹配任何资料）",
    ),
    "case_has_no_turns": Message(
        "case {case_id_or_index_1}: it has no turns",
        "用例 {case_id_or_index_1}：没有任何对话轮次",
    ),
    "case_last_question_empty": Message(
        "case {case_id_or_index_1}: its last question is empty",
        "用例 {case_id_or_index_1}：最后一个问题为空",
    ),
    "case_last_question_longer_estimated_tokens": Message(
        "case {case_id_or_index_1}: its last question is longer than {max_question_tokens} estimated tokens",
        "用例 {case_id_or_index_1}：最后一个问题超过了 {max_question_tokens} 个 token（估算）",
    ),
    "case_last_turn_has_no_gold": Message(
        "case {case_id_or_index_1}: its last turn has no gold snippets to look for",
        "用例 {case_id_or_index_1}：最后一轮没有要查找的标准答案片段",
    ),
    "case_more_turns": Message(
        "case {case_id_or_index_1}: more than {max_turns} turns",
        "用例 {case_id_or_index_1}：超过了 {max_turns} 轮",
    ),
}
