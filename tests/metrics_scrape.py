"""Reading a ``/metrics`` page the way Prometheus does (``prometheus_client``'s own parser), for
tests that count what one question added."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

ASK_ROUTE = "/api/application/chat_message/{chat_id}"


@dataclass(frozen=True)
class Scrape:
    samples: tuple[Sample, ...]
    families: frozenset[str]

    @classmethod
    def parse(cls, text: str) -> Scrape:
        families = list(text_string_to_metric_families(text))
        return cls(tuple(s for f in families for s in f.samples), frozenset(f.name for f in families))

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels``."""
        return sum(s.value for s in self.matching(name, **labels))

    def matching(self, name: str, **labels: str) -> Iterator[Sample]:
        for sample in self.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                yield sample

    def ours(self) -> Iterator[Sample]:
        """The project's own samples (``kb_*``), not the process collector's."""
        return (s for s in self.samples if s.name.startswith("kb_"))


def grew(before: Scrape, after: Scrape, name: str, **labels: str) -> float:
    """How much the samples ``name`` with ``labels`` grew from ``before`` to ``after``."""
    return after.value(name, **labels) - before.value(name, **labels)


def increments(before: Scrape, after: Scrape, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Per label set, how much ``name`` grew from ``before`` to ``after`` (series that grew)."""
    old = {tuple(sorted(s.labels.items())): s.value for s in before.matching(name)}
    grown = {}
    for sample in after.matching(name):
        key = tuple(sorted(sample.labels.items()))
        delta = sample.value - old.get(key, 0.0)
        if delta:
            grown[key] = delta
    return grown


async def scrape(client: httpx.AsyncClient, url: str) -> Scrape:
    response = await client.get(url)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain"), response.headers["content-type"]
    return Scrape.parse(response.text)
