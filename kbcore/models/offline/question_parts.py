"""Split a compound question into the parts that each need their own evidence.

Multi-round retrieval exists because "A是多少？另外，B是多少？" often retrieves evidence for A
only. The offline model cannot ask a language model which parts a question has, so it splits
on the surface signals Chinese questions use: sentence ends, connectives (另外/此外/…), and
the "A和B…分别…" pattern, where one predicate is asked of several subjects.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from kbcore.models.offline.terms import normalise, terms_of

_SENTENCE_END = re.compile(r"(?<=[？?；;。！!])")
_CLAUSE_CONNECTIVE = re.compile(r"[，,]\s*(?:另外|此外|同时|以及|还有)[，,]?\s*")
_LEADING_CONNECTIVE = re.compile(r"^(?:另外|此外|同时|以及|还有|并且|而且|那么)[，,]?\s*")
# "请分别说明：" / "请告诉我三件事：" introduce the parts but are not one.
_FRAMING = re.compile(r"^(?:(?:请|麻烦|帮我|我想)[^：:？?。！!，,]{0,12}|[^：:？?。！!，,]{0,8}件事)[：:]\s*")
_LEADING_FILLER = re.compile(r"^(?:请问|请|我想知道|想问一下|问一下|想了解)")
_ENTITY_JOINER = re.compile(r"和|与|及|跟|、")
_ENTITY_STOP = set("的在对于从把被给向将为是有和与及跟、，,。？?；;：:！!“”\"'‘’（）()《》 \t\u3000")
_ADMIN_SUFFIX = "县乡镇市区省"
_RESPECTIVELY = "分别"
# 各 as "each" before a verb, not 各项/各级/各类/各地… (a determiner).
_EACH = re.compile(r"分别|各(?![项级类种个地界位自部单样])")
_PAIR_JOINER = r"(?:和|与|及|跟|同)"
# Words that count the two subjects, meaningless once each part has one: "这俩地方", "两边".
_PAIR_WORD = re.compile(r"这?(?:俩|两)个?(?:地方|边|家|处|个)?[，,]?")
_COMPARISON = re.compile(
    r"^(?:那|再)?(?:比一比|比比|比较一下|对比一下)?[，,]?\s*(?:哪|谁)[家边个位样]?(?:更|比较)?[^\s，,。？?！!]{0,4}[？?。！!]?$"
)


def split_question(question: str) -> list[str]:
    """The parts of ``question`` in order; a question with one part comes back as ``[question]``."""
    text = " ".join(question.split())
    body = _FRAMING.sub("", text, count=1) or text
    parts: list[str] = []
    for sentence in _SENTENCE_END.split(body):
        for clause in _CLAUSE_CONNECTIVE.split(sentence):
            clause = _LEADING_CONNECTIVE.sub("", clause.strip()).strip()
            if clause and any(ch.isalnum() for ch in clause):
                split = _split_respectively(clause)
                parts.extend(split if len(split) > 1 else _split_each(clause))
    parts = _merge_contentless(parts)
    return parts or [text]


def _merge_contentless(parts: list[str]) -> list[str]:
    """Attach a part with no content words ("还要做什么？", "能待多久？"), or one that only asks
    to compare what came before ("哪家掏得多？", "比一比谁多。"), to the part before it: the
    evidence for that part answers it, and it has no evidence of its own to look for."""
    merged: list[str] = []
    for part in parts:
        if merged and (not terms_of(part) or is_comparison(part)):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def is_comparison(clause: str) -> bool:
    """Whether ``clause`` only asks to compare what came before it ("哪家掏得多？", "比一比谁多。")."""
    return _COMPARISON.match(clause.strip()) is not None


def asks_each(part: str) -> bool:
    """Whether ``part`` asks something of each of several subjects (各/分别)."""
    return _EACH.search(part) is not None


def _split_each(clause: str) -> list[str]:
    """ "白石和青禾两边今年…各安排了多少" → one clause per name, the other name left out.

    Colloquial questions say 各 (or 分别) with two names joined by 和/跟/与 and anything
    between them and the predicate, which ``_split_respectively`` cannot parse; here the two
    names only have to stand side by side."""
    trigger = _EACH.search(clause)
    if trigger is None:
        return [clause]
    names = [t.text for t in terms_of(clause) if t.anchor and not t.numeric]
    text = normalise(clause)
    for first, second in itertools.pairwise(names):
        pair = re.search(re.escape(first) + _PAIR_JOINER + re.escape(second), text[: trigger.start()])
        if pair is None:
            continue
        joiner_end = pair.end() - len(second)
        base = clause[: trigger.start()] + clause[trigger.end() :]
        return [
            _without_pair_word(base[: pair.start() + len(first)] + base[pair.end() :]),
            _without_pair_word(base[: pair.start()] + base[joiner_end:]),
        ]
    return _split_each_phrase(clause, trigger)


def _split_each_phrase(clause: str, trigger: re.Match[str]) -> list[str]:
    """ "驰骋电驴的大架子，跟澄风空气净化器整台机器，质保期各是几年" → one part per subject
    phrase, each with the shared predicate: the subjects are whole phrases, separated by a
    comma and a joiner, one of them at least with a name ("驰骋" is also a dictionary word)."""
    head, tail = clause[: trigger.start()], clause[trigger.end() :]
    pieces = [piece.strip("，, ") for piece in re.split(rf"[，,、]\s*{_PAIR_JOINER}", head)]
    if len(pieces) < 2:
        return [clause]
    last = pieces[-1]
    cut = max(last.rfind("，"), last.rfind(","))
    if cut < 0:
        return [clause]
    subjects = [*pieces[:-1], last[:cut]]
    named = [any(t.anchor and not t.numeric for t in terms_of(subject)) for subject in subjects]
    if not any(named) or not all(terms_of(subject) for subject in subjects):
        return [clause]
    return [f"{subject}，{last[cut + 1 :]}{tail}" for subject in subjects]


def _without_pair_word(part: str) -> str:
    """A split part without the word that counted the pair ("白石这俩地方，今年…" → "白石今年…")."""
    return _PAIR_WORD.sub("", part, count=1)


def _split_respectively(clause: str) -> list[str]:
    """ "白石镇和青禾乡…分别是多少" → one clause per subject, each keeping the shared predicate."""
    position = clause.find(_RESPECTIVELY)
    if position < 0:
        return [clause]
    first = next((m for m in _ENTITY_JOINER.finditer(clause, 0, position)), None)
    if first is None:
        return [clause]
    start = _run_start(clause, first.start())
    entities = [clause[start : first.start()]]
    cursor = first.end()
    while True:
        end = _run_end(clause, cursor, position)
        if end == cursor:
            return [clause]
        entities.append(clause[cursor:end])
        joiner = _ENTITY_JOINER.match(clause, end)
        if joiner is None or joiner.end() >= position:
            break
        cursor = joiner.end()
    prefix = clause[:start]
    entities[0], prefix = _strip_shared_scope(entities[0], prefix, entities[1:])
    entities[0], prefix = _strip_filler(entities[0], prefix)
    if not entities[0]:
        return [clause]
    rest = clause[end:].replace(_RESPECTIVELY, "", 1)
    return [f"{prefix}{entity}{rest}" for entity in entities]


def _run_start(text: str, index: int) -> int:
    """Where the name that ends at ``index`` starts: back to a function word, punctuation or a date."""
    start = index
    while start > 0 and text[start - 1] not in _ENTITY_STOP:
        if text[start - 1].isdigit() and not _in_model_name(text, start - 1):
            break
        start -= 1
    while 0 < start < index and text[start - 1].isdigit() and text[start] in "年月日号":
        start += 1  # "2026年白石镇…": the date is shared context, not part of the name
    return start


def _run_end(text: str, index: int, limit: int) -> int:
    """Where the name that starts at ``index`` ends: at a function word, punctuation, a date or 分别."""
    end = index
    while end < limit and text[end] not in _ENTITY_STOP:
        if text[end].isdigit() and not _in_model_name(text, end):
            break
        end += 1
    return end


def _in_model_name(text: str, index: int) -> bool:
    """Digits belong to a name only inside a latin model code (AP-360, E5), not in a year or amount."""
    start = end = index
    while start > 0 and _is_code_char(text[start - 1]):
        start -= 1
    while end < len(text) and _is_code_char(text[end]):
        end += 1
    return any(ch.isascii() and ch.isalpha() for ch in text[start:end])


def _is_code_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "-")


def _strip_shared_scope(first: str, prefix: str, others: list[str]) -> tuple[str, str]:
    """ "云岭县实验小学和县图书馆": 云岭县 scopes both subjects, so it moves to the shared prefix."""
    shortest = min(len(other) for other in others)
    if len(first) <= shortest:
        return first, prefix
    for i, ch in enumerate(first):
        if ch in _ADMIN_SUFFIX and len(first) - i - 1 >= 2:
            return first[i + 1 :], prefix + first[: i + 1]
    return first, prefix


def _strip_filler(first: str, prefix: str) -> tuple[str, str]:
    filler = _LEADING_FILLER.match(first)
    if filler is None:
        return first, prefix
    return first[filler.end() :], prefix + filler.group(0)


def normalise_query(text: str) -> str:
    """A query's identity for de-duplication (a repeated query ends the loop): NFKC, lower-cased, no whitespace or punctuation."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in folded if not ch.isspace() and not unicodedata.category(ch).startswith("P"))
