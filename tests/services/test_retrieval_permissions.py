"""The retrieval service checks calls made for a person (``kb-caller-bin``) against the permission
table: an editor works on the datasets granted to them and is refused the others, a viewer reads
and changes nothing, lists show a person only their datasets, a new dataset is granted to its
creator in the same transaction, the deployment's own calls go on unchecked, and a principal
that cannot be read is nobody."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import UserAccount, UserGrant, new_id
from kbcore.permissions.roles import OPERATOR, Kind, Principal, Role
from kbcore.permissions.wire import METADATA_KEY, principal_metadata
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import RetrievalStubs
from tests.grpc_status import outcome_of, status_of
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=10)
Metadata = tuple[tuple[str, Any], ...]
NOT_SEEN = "not among those your account may see"
NOT_CHANGED = "may not change this dataset"


@dataclass(frozen=True)
class Shelf:
    """A dataset with one ready document, made by the deployment itself (no principal)."""

    dataset_id: str
    document_id: str
    words: str  # a phrase only this dataset holds


async def shelf(retrieval: RetrievalStubs, name: str, words: str) -> Shelf:
    dataset = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=name))).dataset
    paragraphs = pb.ParagraphList(paragraphs=[pb.ParagraphInput(title=name, content=f"{words}，见说明书第三页。")])
    request = pb.AddDocumentRequest(dataset_id=dataset.id, name="说明", paragraphs=paragraphs)
    [document] = [e.document async for e in retrieval.documents.AddDocument(request) if e.HasField("document")]
    return Shelf(dataset.id, document.id, words)


async def person(sessions: async_sessionmaker[AsyncSession], role: Role, unique: str, *datasets: str) -> Principal:
    """A user row (grants name it) and the principal the gateway would send for them."""
    user_id = new_id()
    username = f"{role.value}-{unique}-{user_id[:8]}"
    async with sessions.begin() as session:
        session.add(UserAccount(id=user_id, username=username, role=role.value))
    return Principal(Kind.USER, role, user_id=user_id, username=username, datasets=frozenset(datasets))


def acting(principal: Principal) -> Metadata:
    return principal_metadata(principal)


async def grants_of(sessions: async_sessionmaker[AsyncSession], user_id: str) -> set[tuple[str, str]]:
    async with sessions() as session:
        rows = await session.execute(
            select(UserGrant.object_kind, UserGrant.object_id).where(UserGrant.user_id == user_id)
        )
        return {(kind, object_id) for kind, object_id in rows.all()}


async def paragraph_count(retrieval: RetrievalStubs, target: Shelf) -> int:
    reply = await retrieval.paragraphs.ListParagraphs(
        pb.ListParagraphsRequest(dataset_id=target.dataset_id, document_id=target.document_id, page=1, page_size=50)
    )
    return int(reply.total)


@pytest.fixture
async def shelves(retrieval: RetrievalStubs, unique: str) -> tuple[Shelf, Shelf]:
    return (
        await shelf(retrieval, f"perm-a-{unique}", f"蓝鲸扫地机{unique}"),
        await shelf(retrieval, f"perm-b-{unique}", f"红隼烤面包机{unique}"),
    )


async def searched(retrieval: RetrievalStubs, metadata: Metadata, dataset_ids: list[str], query: str) -> list[str]:
    request = pb.SearchRequest(dataset_ids=dataset_ids, query=query, search=KEYWORD)
    reply = await retrieval.search.Search(request, metadata=metadata)
    return [p.dataset_id for p in reply.paragraphs]


async def test_an_editor_reads_searches_and_changes_a_granted_dataset(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    a, _ = shelves
    editor = acting(await person(sessions, Role.EDITOR, unique, a.dataset_id))
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=editor)
    assert [d.id for d in listed.datasets] == [a.dataset_id], "only the granted dataset, of all there are"
    assert await searched(retrieval, editor, [a.dataset_id], a.words) == [a.dataset_id]
    documents = await retrieval.documents.ListDocuments(
        pb.ListDocumentsRequest(dataset_id=a.dataset_id), metadata=editor
    )
    assert [d.id for d in documents.documents] == [a.document_id]
    added = await retrieval.paragraphs.AddParagraph(
        pb.AddParagraphRequest(dataset_id=a.dataset_id, document_id=a.document_id, content="编辑添加的段落。"),
        metadata=editor,
    )
    assert added.dataset_id == a.dataset_id and await paragraph_count(retrieval, a) == 2


async def test_an_editor_is_refused_a_dataset_not_granted_to_them(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    a, b = shelves
    editor = acting(await person(sessions, Role.EDITOR, unique, a.dataset_id))
    reads = [
        retrieval.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=b.dataset_id), metadata=editor),
        retrieval.documents.GetDocument(
            pb.GetDocumentRequest(dataset_id=b.dataset_id, document_id=b.document_id), metadata=editor
        ),
        retrieval.paragraphs.ListParagraphs(
            pb.ListParagraphsRequest(dataset_id=b.dataset_id, document_id=b.document_id, page=1, page_size=10),
            metadata=editor,
        ),
        retrieval.search.Search(pb.SearchRequest(dataset_ids=[b.dataset_id], query=b.words), metadata=editor),
        retrieval.search.Search(pb.SearchRequest(dataset_ids=[], query=b.words), metadata=editor),
        retrieval.search.Search(pb.SearchRequest(dataset_ids=[" ", ""], query=b.words), metadata=editor),
        retrieval.search.Search(
            pb.SearchRequest(dataset_ids=[a.dataset_id, b.dataset_id], query=b.words), metadata=editor
        ),
        retrieval.search.Retrieve(pb.RetrieveRequest(dataset_ids=[b.dataset_id], question=b.words), metadata=editor),
    ]
    for call in reads:
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, f"this dataset is {NOT_SEEN}")
    changes = [
        retrieval.paragraphs.AddParagraph(
            pb.AddParagraphRequest(dataset_id=b.dataset_id, document_id=b.document_id, content="越权写入。"),
            metadata=editor,
        ),
        retrieval.datasets.UpdateDataset(
            pb.UpdateDatasetRequest(dataset_id=b.dataset_id, name="taken over"), metadata=editor
        ),
        retrieval.datasets.DeleteDataset(pb.DeleteDatasetRequest(dataset_id=b.dataset_id), metadata=editor),
        retrieval.documents.AddDocument(
            pb.AddDocumentRequest(
                dataset_id=b.dataset_id,
                name="x",
                paragraphs=pb.ParagraphList(paragraphs=[pb.ParagraphInput(content="越权写入。")]),
            ),
            metadata=editor,
        ),
    ]
    for call in changes:
        code, message = await status_of(call)
        assert code == grpc.StatusCode.PERMISSION_DENIED and NOT_CHANGED in message
    assert await paragraph_count(retrieval, b) == 1, "nothing of B changed"
    documents = await retrieval.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=b.dataset_id))
    assert [d.id for d in documents.documents] == [b.document_id]


async def test_a_viewer_reads_a_granted_dataset_and_changes_nothing(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    a, _ = shelves
    viewer = acting(await person(sessions, Role.VIEWER, unique, a.dataset_id))
    assert await searched(retrieval, viewer, [a.dataset_id], a.words) == [a.dataset_id]
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=viewer)
    assert [d.id for d in listed.datasets] == [a.dataset_id]
    code, message = await status_of(
        retrieval.paragraphs.AddParagraph(
            pb.AddParagraphRequest(dataset_id=a.dataset_id, document_id=a.document_id, content="查看者写入。"),
            metadata=viewer,
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED and NOT_CHANGED in message
    code, message = await status_of(
        retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"viewer-{unique}"), metadata=viewer)
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED and "editor" in message
    assert await paragraph_count(retrieval, a) == 1


async def test_a_dataset_an_editor_creates_is_granted_to_them_and_its_grant_goes_with_it(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    creator = await person(sessions, Role.EDITOR, unique)
    created = await retrieval.datasets.CreateDataset(
        pb.CreateDatasetRequest(name=f"mine-{unique}"), metadata=acting(creator)
    )
    dataset_id = created.dataset.id
    assert await grants_of(sessions, creator.user_id) == {("dataset", dataset_id)}
    # The gateway resolves the person afresh on their next call: the grant is in their principal.
    again = Principal(Kind.USER, Role.EDITOR, user_id=creator.user_id, datasets=frozenset({dataset_id}))
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=acting(again))
    assert [d.id for d in listed.datasets] == [dataset_id]
    await retrieval.datasets.DeleteDataset(pb.DeleteDatasetRequest(dataset_id=dataset_id), metadata=acting(again))
    assert await grants_of(sessions, creator.user_id) == set()


async def test_an_editor_cannot_take_over_a_dataset_by_creating_it_under_its_id(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    _, b = shelves
    editor = await person(sessions, Role.EDITOR, unique)
    code, message = await status_of(
        retrieval.datasets.CreateDataset(
            pb.CreateDatasetRequest(name="mine now", id=b.dataset_id), metadata=acting(editor)
        )
    )
    assert code == grpc.StatusCode.ABORTED and "taken" in message
    assert await grants_of(sessions, editor.user_id) == set()
    [kept] = [
        d for d in (await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest())).datasets if d.id == b.dataset_id
    ]
    assert kept.name != "mine now"


async def test_the_deployments_own_calls_go_on_unchecked(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    a, b = shelves
    editor = acting(await person(sessions, Role.EDITOR, unique, a.dataset_id))
    await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=editor)  # a person's call first
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest())
    assert {a.dataset_id, b.dataset_id} <= {d.id for d in listed.datasets}, "the person's filter did not stay"
    assert await searched(retrieval, (), [b.dataset_id], b.words) == [b.dataset_id]
    code, message = await status_of(retrieval.search.Search(pb.SearchRequest(dataset_ids=[], query=b.words)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dataset_ids" in message, "the servicer's own check, not ours"


async def test_administrators_see_every_dataset_and_others_are_refused(
    retrieval: RetrievalStubs, sessions: async_sessionmaker[AsyncSession], shelves: tuple[Shelf, Shelf], unique: str
) -> None:
    a, b = shelves
    admin = acting(await person(sessions, Role.ADMIN, unique))
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=admin)
    assert {a.dataset_id, b.dataset_id} <= {d.id for d in listed.datasets}
    assert await searched(retrieval, admin, [b.dataset_id], b.words) == [b.dataset_id]
    editor = acting(await person(sessions, Role.EDITOR, unique, a.dataset_id))
    code, message = await status_of(
        retrieval.search.GroupTexts(pb.GroupTextsRequest(texts=["a", "b"]), metadata=editor)
    )
    assert (code, message) == (grpc.StatusCode.PERMISSION_DENIED, "only an administrator may do this")
    application = acting(Principal(Kind.APPLICATION, application_id="app-1"))
    code, _ = await status_of(retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=application))
    assert code == grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize("value", [b"not json", b'{"kind": "operator"', b'{"kind": "root"}', b"[]"])
async def test_a_principal_that_cannot_be_read_is_anonymous_and_refused(
    retrieval: RetrievalStubs, value: bytes
) -> None:
    garbled: Metadata = ((METADATA_KEY, value),)
    for call in (
        retrieval.datasets.ListDatasets(pb.ListDatasetsRequest(), metadata=garbled),
        retrieval.search.Search(pb.SearchRequest(dataset_ids=[DEMO_DATASET_ID], query="年假"), metadata=garbled),
    ):
        code, _ = await status_of(call)
        assert code == grpc.StatusCode.PERMISSION_DENIED
    assert await searched(retrieval, (), [DEMO_DATASET_ID], "年假"), "the same search of our own finds paragraphs"


async def test_a_method_the_table_does_not_list_is_refused_to_every_principal(stack: Stack) -> None:
    listing = reflection_pb2.ServerReflectionRequest(list_services="")
    channel = open_channel(stack.retrieval_target, stack.credential)
    try:
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        code, message = await status_of(reflection.ServerReflectionInfo(iter([listing]), metadata=acting(OPERATOR)))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "permission table" in message
        assert await outcome_of(reflection.ServerReflectionInfo(iter([listing]))) == (grpc.StatusCode.OK, "")
    finally:
        await channel.close()
