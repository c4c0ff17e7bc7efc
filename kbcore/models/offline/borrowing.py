"""Whether a question borrows words from the chat before it, decided by what retrieval found.

A rewrite lends a question the earlier question's subject ("要多久？" after a question about
the library becomes "县图书馆借书，要多久？"). Lent to a question that changed the subject
("摄像头保修多久？" after a question about a trip), the same words glue two topics together
and pull the search back to the earlier answer. How many words a question has says nothing
about which it is: "退款多久到账？" is complete, "押金多少？" right after a question about a
rental is not. What the first round found does: it searched the question as asked beside the
rewrite, so

- a question that says it goes on from the chat ("那周末呢？", "这个期限…") keeps them;
- a question whose own words no retrieved paragraph holds (and that the judge found no answer,
  nor anything near, for as asked), or that has none, keeps them when it asks for something
  ("要多久？", "招多少人？"), not when it is a bare word or an unknown name ("星澜？");
- otherwise it keeps them when the earlier subject's document (the one holding most of the lent
  words) holds its own words too: "押金多少？" keeps the rental it was asked
  after when the rental's terms state a deposit; "年假有几天？" after a question about a door
  lock, whose words live only in the leave rules, keeps nothing.

The same rule decides for every model: the loop calls it with the evidence of its first round
(``services/retrieval/search/loop.py``); the offline model adds the paragraphs it found
answering the question as asked, by meaning as well as by words.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from kbcore.models.offline.answer_kinds import asked_kinds
from kbcore.models.offline.evidence import COVER_THRESHOLD, Passage, need, paragraph_share
from kbcore.models.offline.rewrite import says_it_continues
from kbcore.models.offline.terms import Term, contains, match_credit, normalise, terms_of


def lent_terms(question: str, rewrite: str) -> list[Term]:
    """The content words ``rewrite`` has and ``question`` lacks: what the chat lent it."""
    own = normalise(question)
    return [t for t in terms_of(rewrite) if not contains(own, t)]


def own_places(
    question: str, evidence: Sequence[Passage], answered: Collection[str] = (), nearest: Collection[str] = ()
) -> list[Passage]:
    """The paragraphs the question as asked finds for its own words: those that hold them (as
    the offline model covers a part) and those the judge found answering it (``answered``,
    paragraph ids); failing both, those the judge found nearest it by meaning (``nearest``)."""
    wanted = need(question, part=question, asked=question)
    found = [p for p in evidence if p.paragraph.id in answered or paragraph_share(wanted, p) >= COVER_THRESHOLD]
    return found or [p for p in evidence if p.paragraph.id in nearest]


def subject_documents(lent: Sequence[Term], evidence: Sequence[Passage]) -> set[str]:
    """The documents the lent words are about: those holding the largest share of their weight,
    and at least half of it (the earlier question's own document, not one that shares a word of
    it by chance, "每天")."""
    total = sum(t.weight for t in lent)
    held: dict[str, float] = {}
    for passage in evidence:
        name = passage.paragraph.document_name
        if name not in held:
            held[name] = sum(t.weight * match_credit(passage.document_text, t) for t in lent)
    best = max(held.values(), default=0.0)
    if best * 2 < total:
        return set()
    return {name for name, weight in held.items() if weight == best}


def supported_reading(
    question: str,
    rewrite: str,
    evidence: Sequence[Passage],
    answered: Collection[str] = (),
    nearest: Collection[str] = (),
) -> str:
    """``rewrite`` when the evidence says the question needs the words it was lent, else
    ``question`` as asked. ``answered`` and ``nearest`` are the paragraphs (ids) a judge found
    answering the question as asked, or nearest it (see ``own_places``)."""
    lent = lent_terms(question, rewrite)
    if rewrite == question or not lent:
        return rewrite
    if says_it_continues(question):
        return rewrite
    subject = subject_documents(lent, evidence)
    if not subject:
        return question  # no document is about the lent words: they cannot help the search
    asks = bool(asked_kinds(question))
    # Nearest by meaning is something only for a question that asks for something: anything
    # is nearest to a bare word or an unknown name ("星澜？").
    places = own_places(question, evidence, answered, nearest if asks else ()) if terms_of(question) else []
    if not places:
        # Nothing of its own found: the lent subject completes a question that asks something
        # ("要多久？", "招多少人？"); a bare word or name it would only be glued to.
        return rewrite if asks else question
    # The question goes on about the earlier subject when that subject's document holds its own
    # words too: "押金多少？" after a question about a rental whose terms state a deposit. A
    # question whose words live in other documents only has changed the subject.
    return rewrite if {p.paragraph.document_name for p in places} & subject else question
