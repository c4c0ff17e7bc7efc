"""The retrieval service's audit trail over real gRPC: each change a person asks for through the
gateway (``kb-caller-bin`` and ``kb-client-address``) adds exactly one row naming them, where
they called from and what changed, in the transaction of the change; a refused call adds none;
the deployment's own calls are the actor ``service``; the background work a call starts
(ingestion, re-embedding) adds nothing; and no row holds a document's or paragraph's text
(docs/access.md, "The audit trail")."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import AuditEvent, ModelEndpoint, UserAccount, new_id
from kbcore.permissions.roles import Kind, Principal, Role
from kbcore.permissions.wire import address_metadata, principal_metadata
from kbcore.rpc.stubs import RetrievalStubs
from tests.eventually import eventually
from tests.fakes.low_cosine_embeddings import LowCosineEmbeddings
from tests.grpc_status import status_of

Sessions = async_sessionmaker[AsyncSession]
Metadata = tuple[tuple[str, Any], ...]
ADDRESS = "203.0.113.7"
# Texts no row may hold: the documents' and paragraphs' content.
MANUAL_TEXT = "长按电源键三秒钟，指示灯变为蓝色即开机完成。"
FAQ_TEXT = "退货需在签收后七日内申请，运费由买家承担。"
ADDED_TEXT = "审计新增段落：每月第一个周一检查灭火器压力。"
EDITED_TEXT = "审计修改后的段落：每周五检查应急照明。"
TEXTS = (MANUAL_TEXT, FAQ_TEXT, ADDED_TEXT, EDITED_TEXT)
MANUAL = pb.ParagraphList(paragraphs=[pb.ParagraphInput(title="开机", content=MANUAL_TEXT)])
FAQ = f"# 常见问题\n\n## 退货\n\n{FAQ_TEXT}\n".encode()
Row = tuple[str, str, str, str, str]  # action, object kind, id, name, detail


@pytest.fixture(scope="module")
def embeddings() -> Iterator[LowCosineEmbeddings]:
    """A registered embedding model's endpoint, which can hold its calls: background work that
    stays running while a test cancels it."""
    with LowCosineEmbeddings(dim=64) as server:
        yield server


@pytest.fixture
async def model_id(sessions: Sessions, embeddings: LowCosineEmbeddings, unique: str) -> AsyncIterator[str]:
    """The fake registered as an embedding model (the chat service's row, written here directly)."""
    row = ModelEndpoint(
        name=f"审计嵌入-{unique}", provider="vllm", base_url=embeddings.base_url, model="fake", purpose="embedding"
    )
    async with sessions.begin() as session:
        session.add(row)
    yield row.id
    embeddings.release()


async def person(sessions: Sessions, role: Role, unique: str, *datasets: str) -> Principal:
    """A user row and the principal the gateway would send for them."""
    user_id = new_id()
    username = f"audit-{role.value}-{unique}"
    async with sessions.begin() as session:
        session.add(UserAccount(id=user_id, username=username, role=role.value))
    return Principal(Kind.USER, role, user_id=user_id, username=username, datasets=frozenset(datasets))


def calling(principal: Principal) -> Metadata:
    """The metadata the gateway sends with a person's call."""
    return (*principal_metadata(principal), *address_metadata(ADDRESS))


async def audit_rows(sessions: Sessions, *, actor: str = "", objects: tuple[str, ...] = ()) -> list[AuditEvent]:
    """The rows ``actor`` (a username) made, or that name one of ``objects``."""
    named = AuditEvent.object_id.in_(objects)
    async with sessions() as session:
        found = await session.scalars(
            select(AuditEvent).where(or_(AuditEvent.actor_name == actor, named) if actor else named)
        )
        return list(found.all())


def described(rows: list[AuditEvent]) -> Counter[Row]:
    return Counter((r.action, r.object_kind, r.object_id, r.object_name, r.detail) for r in rows)


def assert_no_text(rows: list[AuditEvent]) -> None:
    for row in rows:
        fields = (row.actor_name, row.action, row.object_id, row.object_name, row.detail)
        for text in TEXTS:
            assert not any(text[:8] in field for field in fields), f"{row.action} holds document text"


async def document_added(retrieval: RetrievalStubs, request: pb.AddDocumentRequest, metadata: Metadata) -> pb.Document:
    events = [e async for e in retrieval.documents.AddDocument(request, metadata=metadata)]
    documents: list[pb.Document] = [e.document for e in events if e.HasField("document")]
    assert len(documents) == 1, "the stream ends with the document, once"
    return documents[0]


async def test_each_change_of_an_administrator_is_one_row_naming_them_and_their_address(
    retrieval: RetrievalStubs, sessions: Sessions, unique: str
) -> None:
    admin = await person(sessions, Role.ADMIN, unique)
    me = calling(admin)
    made = await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"审计-{unique}"), metadata=me)
    ds = made.dataset.id
    renamed = f"审计改名-{unique}"
    await retrieval.datasets.UpdateDataset(
        pb.UpdateDatasetRequest(dataset_id=ds, name=renamed, description="说明"), metadata=me
    )
    manual = await document_added(retrieval, pb.AddDocumentRequest(dataset_id=ds, name="手册", paragraphs=MANUAL), me)
    faq_file = pb.FileContent(filename="faq.md", data=FAQ)
    faq = await document_added(retrieval, pb.AddDocumentRequest(dataset_id=ds, name="问答", file=faq_file), me)
    where = {"dataset_id": ds, "document_id": manual.id}
    added = await retrieval.paragraphs.AddParagraph(
        pb.AddParagraphRequest(**where, title="消防", content=ADDED_TEXT), metadata=me
    )
    await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(**where, paragraph_id=added.id, title="照明", content=EDITED_TEXT), metadata=me
    )
    await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(**where, paragraph_id=added.id, enabled=False), metadata=me
    )
    await retrieval.paragraphs.DeleteParagraph(pb.DeleteParagraphRequest(**where, paragraph_id=added.id), metadata=me)
    await retrieval.documents.DeleteDocument(pb.DeleteDocumentRequest(**where), metadata=me)
    await retrieval.datasets.DeleteDataset(pb.DeleteDatasetRequest(dataset_id=ds), metadata=me)

    rows = await audit_rows(sessions, actor=admin.username)
    in_manual = f"document {manual.id}"
    assert described(rows) == Counter(
        [
            ("dataset.create", "dataset", ds, f"审计-{unique}", ""),
            ("dataset.update", "dataset", ds, renamed, "name, description"),
            ("document.add", "document", manual.id, "手册", f"dataset {ds}, source paragraphs"),
            ("document.add", "document", faq.id, "问答", f"dataset {ds}, source md"),
            ("paragraph.add", "paragraph", added.id, "消防", in_manual),
            ("paragraph.update", "paragraph", added.id, "照明", f"{in_manual}: title, content"),
            ("paragraph.update", "paragraph", added.id, "照明", f"{in_manual}: is_active"),
            ("paragraph.delete", "paragraph", added.id, "照明", in_manual),
            ("document.delete", "document", manual.id, "手册", f"dataset {ds}"),
            ("dataset.delete", "dataset", ds, renamed, "documents: 1, applications detached: 0"),
        ]
    )
    assert {(r.actor_kind, r.actor_id, r.actor_name, r.client_address) for r in rows} == {
        ("user", admin.user_id, admin.username, ADDRESS)
    }
    assert_no_text(rows)


async def test_cancelling_ingestion_and_a_change_of_model_is_recorded_and_the_background_work_is_not(
    retrieval: RetrievalStubs, sessions: Sessions, embeddings: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    admin = await person(sessions, Role.ADMIN, unique)
    me = calling(admin)
    remote = (
        await retrieval.datasets.CreateDataset(
            pb.CreateDatasetRequest(name=f"远程-{unique}", embedding_model_id=model_id), metadata=me
        )
    ).dataset.id
    local = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"本地-{unique}"))).dataset.id
    ours = await document_added(retrieval, pb.AddDocumentRequest(dataset_id=local, name="手册", paragraphs=MANUAL), ())
    embeddings.hold()  # the ingestion and the re-embedding below wait for it
    try:
        submitted = await retrieval.documents.SubmitDocuments(
            pb.SubmitDocumentsRequest(dataset_id=remote, name="问答", paragraphs=MANUAL), metadata=me
        )
        [document] = submitted.documents
        await retrieval.documents.CancelIngestion(
            pb.CancelIngestionRequest(dataset_id=remote, document_id=document.id), metadata=me
        )
        switched = pb.UpdateDatasetRequest(dataset_id=local, embedding_model_id=model_id)
        await retrieval.datasets.UpdateDataset(switched, metadata=me)
        back = pb.UpdateDatasetRequest(dataset_id=local, embedding_model_id="")  # its own model: cancels
        await retrieval.datasets.UpdateDataset(back, metadata=me)
    finally:
        embeddings.release()
    await ended(retrieval, remote, document.id, local)

    rows = await audit_rows(sessions, actor=admin.username)
    assert described(rows) == Counter(
        [
            ("dataset.create", "dataset", remote, f"远程-{unique}", ""),
            ("document.add", "document", document.id, "问答", f"dataset {remote}, source paragraphs"),
            ("document.cancel", "document", document.id, "问答", f"dataset {remote}"),
            ("dataset.update", "dataset", local, f"本地-{unique}", "embedding model"),
            ("dataset.update", "dataset", local, f"本地-{unique}", "embedding model (change cancelled)"),
        ]
    )
    named = await audit_rows(sessions, objects=(remote, local, document.id, ours.id))
    others = [r for r in named if r.actor_name != admin.username]
    # The deployment's own setup calls; the ingestion and re-embedding that ran on added nothing.
    assert Counter((r.actor_kind, r.action, r.object_id) for r in others) == Counter(
        [("service", "dataset.create", local), ("service", "document.add", ours.id)]
    )
    assert_no_text(named)


async def ended(retrieval: RetrievalStubs, dataset_id: str, document_id: str, switched: str) -> None:
    """The cancelled ingestion and the cancelled change of model, both ended in the background."""

    async def document_status() -> int:
        request = pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)
        return int((await retrieval.documents.GetDocument(request)).status)

    await eventually(document_status, lambda s: s == pb.DOCUMENT_STATUS_CANCELLED, what="the cancelled ingestion")
    await eventually(
        lambda: switch_state(retrieval, switched),
        lambda s: s == pb.EMBEDDING_SWITCH_STATE_CANCELLED,
        timeout=30,
        what="the cancelled change of model",
    )


async def switch_state(retrieval: RetrievalStubs, dataset_id: str) -> int:
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest())
    [dataset] = [d for d in listed.datasets if d.id == dataset_id]
    return int(dataset.embedding_switch.state)


async def test_a_change_of_model_is_one_row_and_the_re_embedding_that_follows_none(
    retrieval: RetrievalStubs, sessions: Sessions, model_id: str, unique: str
) -> None:
    admin = await person(sessions, Role.ADMIN, unique)
    dataset_id = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"换模型-{unique}"))).dataset.id
    request = pb.UpdateDatasetRequest(dataset_id=dataset_id, embedding_model_id=model_id)
    await retrieval.datasets.UpdateDataset(request, metadata=calling(admin))
    await eventually(
        lambda: switch_state(retrieval, dataset_id),
        lambda s: s == pb.EMBEDDING_SWITCH_STATE_READY,
        timeout=30,
        what="the change of model",
    )
    rows = await audit_rows(sessions, objects=(dataset_id,))
    assert Counter((r.actor_kind, r.actor_name, r.action, r.detail) for r in rows) == Counter(
        [
            ("service", "", "dataset.create", ""),
            ("user", admin.username, "dataset.update", "embedding model"),
        ]
    )


async def test_a_refused_or_invalid_call_leaves_no_row(
    retrieval: RetrievalStubs, sessions: Sessions, unique: str
) -> None:
    mine = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"编辑的-{unique}"))).dataset.id
    other = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"别人的-{unique}"))).dataset.id
    document = await document_added(
        retrieval, pb.AddDocumentRequest(dataset_id=other, name="手册", paragraphs=MANUAL), ()
    )
    editor = calling(await person(sessions, Role.EDITOR, unique, mine))
    where = {"dataset_id": other, "document_id": document.id}
    refused = [
        retrieval.datasets.UpdateDataset(pb.UpdateDatasetRequest(dataset_id=other, name="占用"), metadata=editor),
        retrieval.datasets.DeleteDataset(pb.DeleteDatasetRequest(dataset_id=other), metadata=editor),
        retrieval.documents.DeleteDocument(pb.DeleteDocumentRequest(**where), metadata=editor),
        retrieval.paragraphs.AddParagraph(pb.AddParagraphRequest(**where, content=ADDED_TEXT), metadata=editor),
    ]
    for call in refused:
        assert (await status_of(call))[0] == grpc.StatusCode.PERMISSION_DENIED
    admin = await person(sessions, Role.ADMIN, unique)
    me = calling(admin)
    invalid = [
        retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name="  "), metadata=me),
        retrieval.datasets.UpdateDataset(pb.UpdateDatasetRequest(dataset_id=other, name=""), metadata=me),
        retrieval.paragraphs.AddParagraph(pb.AddParagraphRequest(**where, content=" "), metadata=me),
        retrieval.documents.DeleteDocument(
            pb.DeleteDocumentRequest(dataset_id=other, document_id=new_id()), metadata=me
        ),
        retrieval.documents.CancelIngestion(pb.CancelIngestionRequest(**where), metadata=me),  # nothing running
    ]
    for call in invalid:
        code, _ = await status_of(call)
        assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ABORTED)
    await retrieval.datasets.UpdateDataset(
        pb.UpdateDatasetRequest(dataset_id=other, name=f"别人的-{unique}"), metadata=me
    )
    rows = await audit_rows(sessions, objects=(other, document.id))
    assert Counter((r.actor_kind, r.action) for r in rows) == Counter(
        [("service", "dataset.create"), ("service", "document.add")]
    ), "the refused calls, and a rename to the name it has, changed nothing"
    assert await audit_rows(sessions, actor=f"audit-editor-{unique}") == []
    assert await audit_rows(sessions, actor=admin.username) == []


async def test_a_call_without_a_principal_is_the_actor_service(
    retrieval: RetrievalStubs, sessions: Sessions, unique: str
) -> None:
    admin = await person(sessions, Role.ADMIN, unique)
    theirs = await retrieval.datasets.CreateDataset(
        pb.CreateDatasetRequest(name=f"人建-{unique}"), metadata=calling(admin)
    )
    ours = await retrieval.datasets.CreateDataset(
        pb.CreateDatasetRequest(name=f"自建-{unique}"), metadata=address_metadata(ADDRESS)
    )
    document = await document_added(
        retrieval, pb.AddDocumentRequest(dataset_id=ours.dataset.id, name="手册", paragraphs=MANUAL), ()
    )
    rows = await audit_rows(sessions, objects=(theirs.dataset.id, ours.dataset.id, document.id))
    assert Counter(
        (r.actor_kind, r.actor_id, r.actor_name, r.client_address, r.action, r.object_id) for r in rows
    ) == Counter(
        [
            ("user", admin.user_id, admin.username, ADDRESS, "dataset.create", theirs.dataset.id),
            ("service", "", "", "", "dataset.create", ours.dataset.id),
            ("service", "", "", "", "document.add", document.id),
        ]
    ), "the person's actor did not stay for the calls after theirs; an address alone names nobody"
    assert_no_text(rows)
