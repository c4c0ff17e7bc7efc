"""Chinese word segmentation (jieba) shared by keyword search and the offline model.

Keyword search must find the same paragraphs on every vector store, so both the stored
paragraphs and the queries are segmented here, by one function, before any store sees them.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata

import jieba

# Function words and question words: they carry no topic, so they never decide a match.
STOPWORDS = frozenset(
    """
    的 了 是 在 和 与 及 以及 或 或者 等 着 也 都 就 而 及其 其 之 为 对 把 被 让 从 向 到 由 于 以 所
    这 那 这个 那个 这些 那些 该 此 上述 它 他 她 我 你 我们 你们 他们 吗 呢 吧 啊 呀 么
    多少 几 几个 几天 哪 哪些 哪个 哪里 什么 怎么 怎样 如何 是否 有没有 请问 请 分别 另外 此外 同时 还有
    一下 能 可以 应该 应当 需要 需 要 会 有 没有 不 没 又 再 还 如果 若 假如 那么 则 时 后 前 内 中 上 下
    a an the of to and or is are was be in on for what how which who when
    """.split()
)

_PUNCT_OR_SPACE = re.compile(r"^[\W_]+$", re.UNICODE)


@functools.cache
def _ready() -> None:
    """Load jieba's dictionary once (about a second); call at service start, not per query."""
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()


def warm_up() -> None:
    _ready()


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def segment(text: str) -> list[str]:
    """Search tokens of ``text``: jieba's search-mode words, lower-cased, without punctuation or stopwords."""
    _ready()
    words = jieba.lcut_for_search(_normalise(text))
    return [w for w in (w.strip() for w in words) if w and not _PUNCT_OR_SPACE.match(w) and w not in STOPWORDS]


def words(text: str) -> list[str]:
    """jieba's words of ``text`` as read (not search mode), normalised, punctuation included: the
    one cut that ``key_terms`` and the offline model's finer readings of the same text share."""
    _ready()
    cut: list[str] = jieba.lcut(_normalise(text))
    return cut


def key_terms(text: str, cut: list[str] | None = None) -> list[str]:
    """Distinct content-bearing words of ``text`` in order: longer than one character, or
    digits/latin. ``cut``: ``words(text)``, when the caller has it already."""
    seen: dict[str, None] = {}
    for word in words(text) if cut is None else cut:
        word = word.strip()
        if not word or _PUNCT_OR_SPACE.match(word) or word in STOPWORDS:
            continue
        if len(word) > 1 or word.isascii():
            seen.setdefault(word, None)
    return list(seen)
