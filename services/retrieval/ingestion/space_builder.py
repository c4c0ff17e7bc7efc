"""The ingestion builder when datasets use different embedding models.

It is a ``VersionBuilder`` (the worker and the document lifecycle take one), but each call
builds in the space of the dataset it names: the dataset's model embeds, into that model's
store. The version logic itself stays in ``VersionBuilder``, one per call's space.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbcore.errors import NotFound
from services.retrieval.embedding.spaces import EmbeddingSpaces
from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.ingestion.unchanged import KeptParagraphs
from services.retrieval.ingestion.version_build import Progress, VersionBuilder, VersionTarget


class SpaceBuilder(VersionBuilder):
    def __init__(self, spaces: EmbeddingSpaces) -> None:
        super().__init__(spaces.default.store, spaces.default.embedder)
        self._spaces = spaces

    async def of_dataset(self, dataset_id: str) -> VersionBuilder:
        space = await self._spaces.served(dataset_id)
        return VersionBuilder(space.store, space.embedder)

    async def kept(self, target: VersionTarget, paragraphs: Sequence[SplitParagraph]) -> KeptParagraphs:
        return await (await self.of_dataset(target.dataset_id)).kept(target, paragraphs)

    async def stage(
        self,
        target: VersionTarget,
        paragraphs: Sequence[SplitParagraph],
        progress: Progress,
        kept: KeptParagraphs | None = None,
    ) -> bool:
        return await (await self.of_dataset(target.dataset_id)).stage(target, paragraphs, progress, kept)

    async def publish(self, target: VersionTarget, kept: KeptParagraphs | None = None) -> None:
        await (await self.of_dataset(target.dataset_id)).publish(target, kept)

    async def attach_questions(
        self, target: VersionTarget, paragraphs: Sequence[SplitParagraph], kept: KeptParagraphs | None = None
    ) -> int:
        return await (await self.of_dataset(target.dataset_id)).attach_questions(target, paragraphs, kept)

    async def drop(self, target: VersionTarget) -> None:
        try:
            builder = await self.of_dataset(target.dataset_id)
        except NotFound:  # the dataset was deleted, and every point of it with it
            return
        await builder.drop(target)

    async def is_intact(self, dataset_id: str, document_id: str, paragraph_count: int) -> bool:
        return await (await self.of_dataset(dataset_id)).is_intact(dataset_id, document_id, paragraph_count)
