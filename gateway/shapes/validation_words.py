"""A request body or parameter that does not fit its shape, in words: which field, and what is
wrong with it, in the reader's language.

English is pydantic's own sentence. Chinese is ours, by the kind of problem pydantic names
(its error ``type``, with the limits from its ``ctx``); a check of our own (a validator raising
``ValueError`` with words, ``kbcore.words.said``) says them in Chinese like any other refusal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import PydanticCustomError

from kbcore.words.language import Language
from kbcore.words.said import Said, said, said_in
from kbcore.words.shown import shown_words

_CHINESE_BY_TYPE = {
    "missing": "缺少这一项",
    "extra_forbidden": "不接受这一项",
    "string_type": "应为文本",
    "string_too_short": "至少 {min_length} 个字符",
    "string_too_long": "最多 {max_length} 个字符",
    "string_pattern_mismatch": "格式不对",
    "int_type": "应为整数",
    "int_parsing": "应为整数",
    "int_from_float": "应为整数，不能带小数",
    "float_type": "应为数字",
    "float_parsing": "应为数字",
    "bool_type": "应为 true 或 false",
    "bool_parsing": "应为 true 或 false",
    "greater_than": "应大于 {gt}",
    "greater_than_equal": "应不小于 {ge}",
    "less_than": "应小于 {lt}",
    "less_than_equal": "应不大于 {le}",
    "too_short": "至少 {min_length} 项",
    "too_long": "最多 {max_length} 项",
    "list_type": "应为列表",
    "dict_type": "应为对象",
    "model_type": "应为对象",
    "model_attributes_type": "应为对象",
    "literal_error": "应为其中之一：{expected}",
    "enum": "应为其中之一：{expected}",
    "json_invalid": "不是有效的 JSON",
    "json_type": "应为 JSON 文本",
    "uuid_type": "应为 UUID",
    "uuid_parsing": "不是有效的 UUID",
    "url_parsing": "不是有效的网址",
    "url_scheme": "网址应以 {expected_schemes} 开头",
    "datetime_parsing": "不是有效的时间",
    "datetime_type": "应为时间",
}
_CHINESE_OTHER = "取值无效"
WORDS = "words"  # the context entry that holds a refusal's words


def refused_field(kind: str, words: Said) -> PydanticCustomError:
    """A validator's refusal of a field, of pydantic's error type ``kind``: its English as the
    problem's message, its words in the problem's context for the other language."""
    return PydanticCustomError(kind, str(words), {WORDS: words})


def _chinese(problem: Mapping[str, Any]) -> str:
    context = problem.get("ctx") or {}
    if isinstance(words := context.get(WORDS), Said):
        return shown_words(words, "zh", said("request_invalid"))
    if problem.get("type") == "value_error" and isinstance(error := context.get("error"), BaseException):
        words = said_in(error)
        return shown_words(words, "zh", said("request_invalid")) if words is not None else _CHINESE_OTHER
    template = _CHINESE_BY_TYPE.get(str(problem.get("type")))
    if template is None:
        return _CHINESE_OTHER
    try:
        return template.format(**{key: str(value) for key, value in context.items()})
    except (KeyError, IndexError):  # a limit pydantic did not give: the kind of problem alone
        return _CHINESE_OTHER


def described(problems: Sequence[Mapping[str, Any]], language: Language) -> str:
    """Each offending field and what is wrong with it: ``body.message: Input should be a valid
    string`` (English), ``body.message：应为文本`` (Chinese)."""
    parts = []
    for problem in problems:
        location = ".".join(str(part) for part in problem.get("loc", ()))
        if language == "en":
            parts.append(f"{location}: {problem.get('msg', 'invalid')}")
        else:
            parts.append(f"{location}：{_chinese(problem)}")
    if parts:
        return ("; " if language == "en" else "；").join(parts)
    return "invalid request" if language == "en" else "请求无效"
