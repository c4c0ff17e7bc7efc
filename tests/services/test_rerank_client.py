"""The rerank client against a real local endpoint: Cohere/Jina/vLLM's shape, TEI's (asked once
more after its 422, then remembered), and every failure as a RerankError in words without the key."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ModelEndpoint
from kbcore.models.failures import SENTENCES, FailureKind
from kbcore.models.rerank import RerankEndpoints, RerankError, parsed
from kbcore.secret_box import SecretBox
from kbcore.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.reranker import FakeReranker, keyword_first

KEY = "sk-rerank-secret-7777"
DOCUMENTS = ["医保报销比例", "ICU探视时间为16:00", "门诊时间", "ICU陪护规定"]


@pytest.fixture
def cohere() -> Iterator[FakeReranker]:
    with FakeReranker(rule=keyword_first("ICU")) as server:
        yield server


@pytest.fixture
def tei() -> Iterator[FakeReranker]:
    with FakeReranker(rule=keyword_first("ICU"), tei=True) as server:
        yield server


@pytest.fixture
async def endpoints(sessions: async_sessionmaker[AsyncSession], settings: Settings) -> AsyncIterator[RerankEndpoints]:
    client = RerankEndpoints(sessions, settings, timeout=2.0)
    yield client
    await client.aclose()


async def registered(
    sessions: async_sessionmaker[AsyncSession], settings: Settings, base_url: str, purpose: str = "rerank"
) -> str:
    row = ModelEndpoint(
        id=str(uuid.uuid4()),
        name=f"reranker-{uuid.uuid4().hex[:8]}",
        provider="generic",
        base_url=base_url,
        model="bge-reranker",
        purpose=purpose,
        api_key_sealed=SecretBox.from_settings(settings).seal(KEY),
        key_hint="…7777",
    )
    async with sessions.begin() as session:
        session.add(row)
    return row.id


async def test_the_common_shape_orders_by_relevance_score(
    endpoints: RerankEndpoints, cohere: FakeReranker, sessions: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    endpoint_id = await registered(sessions, settings, cohere.base_url)
    ranked = await endpoints.rerank(endpoint_id, "ICU探视", DOCUMENTS)
    assert [r.index for r in ranked] == [1, 3, 0, 2]
    assert ranked[0].score == pytest.approx(0.899)
    sent = cohere.requests[0]
    assert sent["documents"] == DOCUMENTS and sent["top_n"] == 4 and sent["model"] == "bge-reranker"
    assert sent["authorization"] == f"Bearer {KEY}"


async def test_tei_is_asked_again_in_its_own_shape_once_then_remembered(
    endpoints: RerankEndpoints, tei: FakeReranker, sessions: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    endpoint_id = await registered(sessions, settings, tei.base_url)
    first = await endpoints.rerank(endpoint_id, "ICU探视", DOCUMENTS)
    second = await endpoints.rerank(endpoint_id, "ICU探视", DOCUMENTS)
    assert [r.index for r in first] == [r.index for r in second] == [1, 3, 0, 2]
    bodies = tei.requests
    assert ["texts" in b for b in bodies] == [False, True, True], "422 once, then TEI's shape straight away"


async def test_failures_are_words_without_the_key(
    endpoints: RerankEndpoints,
    cohere: FakeReranker,
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cohere.status = 401
    refused = await registered(sessions, settings, cohere.base_url)
    with pytest.raises(RerankError, match=re.escape(str(SENTENCES[FailureKind.REFUSED]))):
        await endpoints.rerank(refused, "q", DOCUMENTS)
    assert "answered HTTP 401" in caplog.text and KEY not in caplog.text, "the status is for the log, not the key"
    chat_model = await registered(sessions, settings, cohere.base_url, purpose="chat")
    with pytest.raises(RerankError, match="is a chat model, not a rerank model"):
        await endpoints.rerank(chat_model, "q", DOCUMENTS)
    with pytest.raises(RerankError, match="not registered"):
        await endpoints.rerank("no-such-model", "q", DOCUMENTS)


async def test_a_reply_in_neither_shape_is_refused_in_words(
    endpoints: RerankEndpoints, sessions: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    with FakeOpenAI() as not_a_reranker:  # answers /v1/rerank with 404 (no such route)
        endpoint_id = await registered(sessions, settings, not_a_reranker.base_url)
        with pytest.raises(RerankError, match=re.escape(str(SENTENCES[FailureKind.REFUSED]))):
            await endpoints.rerank(endpoint_id, "q", DOCUMENTS)
    with pytest.raises(ValueError, match="not with a list"):
        parsed({"data": []}, 2)
    with pytest.raises(ValueError, match="for a document sent"):
        parsed({"results": [{"index": 5, "relevance_score": 0.5}]}, 2)
    with pytest.raises(ValueError, match="for a document sent"):
        parsed([{"index": 0, "score": "high"}], 2)
    assert parsed([{"index": 1, "score": 2}], 2)[0].score == 2.0
