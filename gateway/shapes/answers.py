"""Shapes of answers and what is recorded about them: a retrieval round, a paragraph with its
score, a record (MaxKB's fields and the trace), the conversation log, votes, usage, the
knowledge-gap report and the evaluation's scores (``gateway.presenter`` builds each)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gateway.shapes.envelope import Shape

VoteStatus = Literal["-1", "0", "1"]
PartVerdictName = Literal["verified", "nearest", "unverifiable"]


class ParagraphOut(Shape):
    id: str
    dataset_id: str
    document_id: str
    document_name: str
    title: str
    content: str
    similarity: float
    round: int
    dataset_name: str = Field(description="empty for a record saved before it was kept")
    is_active: bool
    meta: dict[str, str]
    rerank_score: float = Field(default=0.0, description="present only when a rerank model scored the paragraph")
    matched_question: str = Field(
        default="", description="present only when a question attached to the paragraph brought it in"
    )


class RoundOut(Shape):
    round: int
    queries: list[str]
    new_paragraph_ids: list[str]
    total_evidence: int
    sufficient: bool
    missing: str
    next_queries: list[str]
    reranked: bool = Field(default=False, description="present only for an application with a rerank model")
    rerank_error: str = Field(default="", description="present only for an application with a rerank model")
    assessment_skipped: bool = Field(
        default=False,
        description="present (true) only when the round added no paragraph: no assessment was asked and the last"
        " verdict stands",
    )
    assessed_by: str = Field(
        default="",
        description="present (`evidence_judge`) only when the local evidence judge decided the round without an"
        " assessment call: every part verified, or follow-up queries of its own",
    )


class RetrievalOut(Shape):
    """The multi-round hit test: the loop's rounds and evidence."""

    problem_text: str
    rounds: list[RoundOut]
    stop_reason: str
    sufficient: bool
    missing: str
    run_time: float
    search_mode: str
    paragraph_list: list[ParagraphOut]


class ContextInfoOut(Shape):
    """How the chat's history was fitted to the model (an empty object when nothing was kept)."""

    enabled: bool = False
    recent_rounds: int = 0
    compacted_rounds: int = 0
    revision: int = 0
    token_budget: int = 0
    estimated_tokens: int = 0


class SearchStepOut(Shape):
    step_type: str
    run_time: float


class ChatStepOut(Shape):
    model: str
    offline_model: bool
    message_tokens: int
    answer_tokens: int
    run_time: float


class PartOut(Shape):
    """One part of the question as the offline model judged it, and the paragraphs it quotes."""

    part: str
    verdict: PartVerdictName = Field(
        description="verified: the quotes answer the part; nearest: they are only the closest evidence;"
        " unverifiable: nothing to quote"
    )
    paragraph_ids: list[str] = Field(description="the quoted paragraphs, in quote order, each once")


class AnswerCardOut(Shape):
    """One card of MaxKB's answer list: the answer and the model's thinking."""

    content: str
    reasoning_content: str


class RecordOut(Shape):
    """One question and its answer: MaxKB's record fields plus the details at top level."""

    id: str
    chat_id: str
    problem_text: str
    padding_problem_text: str
    answer_text: str
    answer_text_list: list[list[AnswerCardOut]]
    reasoning_content: str
    status: str
    error: str
    message_tokens: int
    answer_tokens: int
    run_time: float
    trace_id: str
    create_time: str
    update_time: str
    agent_trace: list[RoundOut]
    agent_stop_reason: str
    search_mode: str
    sufficient: bool
    missing: str
    rewrite_error: str
    paragraph_list: list[ParagraphOut]
    parts: list[PartOut] = Field(
        description="per part of the question, the offline model's verdict; empty for any other model"
        " or when retrieval did not run"
    )
    context_info: ContextInfoOut
    search_step: SearchStepOut
    chat_step: ChatStepOut
    source: str
    vote_status: VoteStatus
    vote_reason: str


class BlockAnswerOut(RecordOut):
    """An answer asked with ``"stream": false``: the saved record, under the fields MaxKB's
    non-streaming answer carries, so a MaxKB API client reads it as it reads MaxKB's."""

    operate: bool = Field(description="always true, as MaxKB's")
    content: str = Field(description="the answer (the record's `answer_text`)")
    is_end: bool = Field(description="always true: the answer is whole and saved")
    answer_list: list[AnswerCardOut] = Field(
        description="MaxKB's answer by node: one card, its thinking the rounds and the model's own reasoning"
    )
    prompt_tokens: int = Field(description="the record's `message_tokens`")
    completion_tokens: int = Field(description="the record's `answer_tokens`")


class RecordPageOut(Shape):
    records: list[RecordOut]
    current: int
    size: int
    total: int


class StoppedOut(Shape):
    stopped: bool


class LogEntryOut(RecordOut):
    """A record of the conversation log, with where it came from and its votes."""

    application_id: str
    log_source: str
    rounds: int
    vote: str
    star_num: int
    trample_num: int
    improved_paragraph_ids: list[str]
    error_detail: str = Field(
        description="what made a failed question fail, for the operator: an upstream's status and words, a model"
        " endpoint's detail without its key, a database driver's first line, or the type of a fault of ours;"
        " never a stack. Empty unless the question failed. The record's `error`, what its reader was told,"
        " carries the error id of the service log's line"
    )


class LogPageOut(Shape):
    records: list[LogEntryOut]
    current: int
    size: int
    total: int


class VoteOut(Shape):
    vote_status: VoteStatus
    vote_reason: str


class UsageDayOut(Shape):
    """One day of MaxKB's chat_record_aggregate_trend, and our outcomes, times and reasons."""

    day: str
    chat_record_count: int
    star_num: int
    trample_num: int
    tokens_num: int
    message_tokens: int
    answer_tokens: int
    answered: int
    failed: int
    stopped: int
    interrupted: int
    p50_run_time: float
    p95_run_time: float
    mean_rounds: float
    insufficient: int
    insufficient_rate: float
    stop_reasons: dict[str, int]


class GapExampleOut(Shape):
    chat_id: str
    chat_record_id: str
    problem_text: str
    gap: str
    create_time: str


class GapGroupOut(Shape):
    label: str
    count: int
    gaps: list[str]
    examples: list[GapExampleOut]


class GapReportOut(Shape):
    records: int
    groups: list[GapGroupOut]


class ImprovementOut(Shape):
    chat_record_id: str
    dataset_id: str
    document_id: str
    paragraph_id: str


class RoundRecallOut(Shape):
    round: int
    recall: float
    all_gold: int


class EvaluationSummaryOut(Shape):
    cases: int
    gold: int
    by_round: list[RoundRecallOut]
    rounds_used: dict[str, int]
    stop_reasons: dict[str, int]


class CaseScoreOut(Shape):
    id: str
    kind: str
    question: str
    problem_text: str
    gold: int
    found_by_round: list[int]
    rounds_used: int
    stop_reason: str


class EvaluationOut(Shape):
    rewrite: bool
    summary: EvaluationSummaryOut
    cases: list[CaseScoreOut]
