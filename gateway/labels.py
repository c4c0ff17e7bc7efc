"""The words people read, put together: the pages load them in one language as
``/ui/labels.json``, and the CLI and the gateway's Python read the Chinese ones by name.

Each word is kept once, in Chinese and English together, in ``gateway.words`` (by area); this
module names the tree the pages receive, the Chinese names Python imports, and the progress
wording of a live answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.words import account_words as accounts
from gateway.words import admin_page_words, audit_words, chat_page_words, log_words
from gateway.words import answer_words as answers
from gateway.words import document_words as documents
from gateway.words import operator_words as operator
from gateway.words.catalogue import Word, Words, chinese, in_language, word_in
from kbcore.answer_notice import FORMER_LABELS, OFFLINE_LABEL
from kbcore.words.language import DEFAULT_LANGUAGE, Language

# Everything the pages read, by area: the same keys in both languages.
WORDS: Words = {
    "stop_reasons": answers.STOP_REASONS,
    "stop_reason_fallback": answers.STOP_REASON_FALLBACK,
    "record_statuses": answers.RECORD_STATUSES,
    "search_modes": answers.SEARCH_MODES,
    "part_verdicts": answers.PART_VERDICTS,
    "scores": answers.SCORES,
    "regenerate": answers.REGENERATE,
    "thinking": answers.THINKING,
    "document_statuses": documents.DOCUMENT_STATUSES,
    "source_types": documents.SOURCE_TYPES,
    "sync_outcomes": documents.SYNC_OUTCOMES,
    "source_states": documents.SOURCE_STATES,
    "progress": answers.PROGRESS,
    "votes": answers.VOTES,
    "usage": operator.USAGE,
    "credentials": operator.CREDENTIALS,
    "log": log_words.LOG,
    "knowledge": log_words.KNOWLEDGE,
    "models": operator.MODELS,
    "rerank": answers.RERANK,
    "questions": answers.QUESTIONS,
    "skipped_assessment": answers.SKIPPED_ASSESSMENT,
    "judged_assessment": answers.JUDGED_ASSESSMENT,
    "account": accounts.ACCOUNT,
    "roles": accounts.ROLES,
    "users": accounts.USERS,
    "personal_tokens": accounts.PERSONAL_TOKENS,
    "audit": audit_words.AUDIT,
    "chat_page": chat_page_words.CHAT_PAGE,
    "record": chat_page_words.RECORD,
    "trace": chat_page_words.TRACE,
    "chat_history": chat_page_words.CHAT_HISTORY,
    "errors": chat_page_words.ERRORS,
    "common": chat_page_words.COMMON,
    "embed": chat_page_words.EMBED,
    "admin_page": admin_page_words.ADMIN_PAGE,
    "admin_text": admin_page_words.ADMIN_TEXT,
}


def _flat(words: Mapping[str, Word], language: Language = DEFAULT_LANGUAGE) -> dict[str, str]:
    return {key: word_in(word, language) for key, word in words.items()}


# The Chinese words by name, for the CLI and the gateway's Python (and the tests that read them).
STOP_REASON_LABELS = _flat(answers.STOP_REASONS)
RECORD_STATUS_LABELS = _flat(answers.RECORD_STATUSES)
SEARCH_MODE_LABELS = _flat(answers.SEARCH_MODES)
PART_VERDICT_LABELS = _flat(answers.PART_VERDICTS)
SOURCE_STATE_LABELS = chinese(documents.SOURCE_STATES)
SCORE_LABELS = chinese(answers.SCORES)["labels"]
ROLE_LABELS = chinese(accounts.ROLES)
PROGRESS = _flat(answers.PROGRESS)
SKIPPED_ASSESSMENT = answers.SKIPPED_ASSESSMENT[0]
JUDGED_ASSESSMENT = answers.JUDGED_ASSESSMENT[0]
QUESTION_WORDS = chinese(answers.QUESTIONS)
RERANK_WORDS = chinese(answers.RERANK)
REGENERATE_WORDS = chinese(answers.REGENERATE)
THINKING_WORDS = chinese(answers.THINKING)
ACCOUNT_WORDS = chinese(accounts.ACCOUNT)
USER_WORDS = chinese(accounts.USERS)
PERSONAL_TOKEN_WORDS = chinese(accounts.PERSONAL_TOKENS)
AUDIT_WORDS = chinese(audit_words.AUDIT)


def stop_reason_label(name: str, language: Language = DEFAULT_LANGUAGE) -> str:
    """A stop reason's words; a reason this build does not know reads as finished."""
    return _flat(answers.STOP_REASONS, language).get(name, word_in(answers.STOP_REASON_FALLBACK, language))


def progress_line(status: dict[str, Any], language: Language = DEFAULT_LANGUAGE) -> str | None:
    """The progress wording for one agent_status payload; None for a phase this build does not know."""
    words = _flat(answers.PROGRESS, language)
    phase = status.get("phase")
    if phase == "assessed":
        if status.get("sufficient"):
            return words["assessed_sufficient"]
        # "Still looking" only when another round runs (a payload without the field, from an
        # earlier build, said so every time).
        looking = "assessed" if status.get("continues", True) else "assessed_stopped"
        return words[f"{looking}_missing" if status.get("missing") else f"{looking}_unnamed_gap"].format(**status)
    if phase == "retrieving" and status.get("queries"):
        # One line per round: its queries side by side, as they are searched.
        status = {**status, "query": words["query_separator"].join(status["queries"])}
    template = words.get(str(phase))
    if template is None:
        return None
    return template.format_map(_Blank(status))


class _Blank(dict[str, Any]):
    """Formatting values: a field the payload lacks reads as '?', never a KeyError."""

    def __missing__(self, key: str) -> str:
        return "?"


def labels_json(language: Language = DEFAULT_LANGUAGE) -> dict[str, Any]:
    """What the pages load: every word in ``language``, and the notices the offline model opens
    an answer with (the log's answer column leaves them out; they are the answer's text, the
    same in every language, not words of the pages)."""
    tree = in_language(WORDS, language)
    tree["log"]["answer_notices"] = [OFFLINE_LABEL, *FORMER_LABELS]
    return tree
