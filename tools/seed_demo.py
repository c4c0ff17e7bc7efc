"""Load the sample Chinese knowledge base and a demo application, idempotently, over gRPC."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.limits import DEFAULT_SIMILARITY, DEFAULT_TOP_N
from kbcore.rpc.caller_token import bearer
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from tools.demo_ids import DemoIds

log = logging.getLogger(__name__)

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "samples" / "kb" / "docs"
DEMO_DATASET_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "kb-chat/demo-dataset"))
DEMO_APPLICATION_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "kb-chat/demo-application"))
# Fixed ids for tests and the bench only; ``make run`` seeds random ones (``tools.demo_ids``).
FIXED_DEMO_IDS = DemoIds(DEMO_DATASET_ID, DEMO_APPLICATION_ID)


@dataclass(frozen=True)
class Seeded:
    dataset_id: str
    application_id: str
    documents: int


async def seed_demo(
    retrieval_target: str,
    chat_target: str,
    operator: str,
    *,
    credential: str,
    ids: DemoIds,
    docs: Path = SAMPLE_DOCS,
    timeout: float = 600,
) -> Seeded:
    """Load the sample documents and create the demo application under ``ids`` (no default, so
    no caller gets the guessable fixed ids by accident); ``operator`` is the operator token,
    ``credential`` the service credential (``kbcore.rpc.service_credential``)."""
    retrieval_channel = open_channel(retrieval_target, credential)
    chat_channel = open_channel(chat_target, credential)
    try:
        retrieval = RetrievalStubs.of(retrieval_channel)
        chat = ChatStubs.of(chat_channel)
        await retrieval.datasets.CreateDataset(
            retrieval_pb.CreateDatasetRequest(
                id=ids.dataset_id, name="示例知识库", description="云岭县、星澜科技等 16 份虚构中文文档"
            ),
            timeout=timeout,
        )
        files = sorted(docs.glob("*.md"))
        for index, path in enumerate(files, 1):
            request = retrieval_pb.AddDocumentRequest(
                dataset_id=ids.dataset_id, file=retrieval_pb.FileContent(filename=path.name, data=path.read_bytes())
            )
            async for event in retrieval.documents.AddDocument(request, timeout=timeout):
                if event.HasField("document"):
                    log.info(
                        "[%d/%d] %s: %d paragraphs",
                        index,
                        len(files),
                        event.document.name,
                        event.document.paragraph_count,
                    )
        await chat.applications.CreateApplication(
            chat_pb.CreateApplicationRequest(
                application=chat_pb.Application(
                    id=ids.application_id,
                    name="示例知识库问答",
                    description="多轮检索演示应用",
                    dataset_ids=[ids.dataset_id],
                    dialogue_number=5,
                    search=common_pb2.SearchSettings(
                        top_n=DEFAULT_TOP_N, similarity=DEFAULT_SIMILARITY, search_mode=common_pb2.SEARCH_MODE_HYBRID
                    ),
                ),
            ),
            timeout=timeout,
            metadata=bearer(operator),
        )
        return Seeded(ids.dataset_id, ids.application_id, len(files))
    finally:
        await retrieval_channel.close()
        await chat_channel.close()
