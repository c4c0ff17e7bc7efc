"""The response shapes in ``/openapi.json``: every operation says what its 200 is and how it
refuses (never FastAPI's 422, which the gateway does not send). The presenter builds each
answer as its shape, so the shapes cannot drift from the wire; what is left to hold is how a
shape goes on the wire: a key with a default only when it was given, a null as a null."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from gateway.app import create_app
from gateway.backends import Backends
from gateway.errors import is_openai_path
from gateway.presenter import dataset_out, paragraph_out
from gateway.shapes.answers import ParagraphOut
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.settings import Settings

NOT_JSON = {
    "text/event-stream",
    "text/csv",
    "text/javascript; charset=utf-8",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


@pytest.fixture(scope="module")
async def spec(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("shapes"))
    backends = Backends.connect(settings)
    yield create_app(settings, backends).openapi()
    await backends.close()


def operations(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", op) for path, methods in spec["paths"].items() for method, op in methods.items()
    ]


def test_every_operation_documents_its_200_and_its_refusals(spec: dict[str, Any]) -> None:
    assert len(operations(spec)) > 40
    for name, operation in operations(spec):
        responses = operation["responses"]
        assert "422" not in responses, f"{name}: the gateway answers a bad request with 400"
        assert {"200", "4XX", "5XX"} <= responses.keys(), name
        content = responses["200"]["content"]
        for media_type, media in content.items():
            schema = media["schema"]
            if media_type == "application/json":
                assert "$ref" in schema, f"{name}: its JSON 200 has no shape"
            else:
                assert media_type in NOT_JSON, f"{name}: {media_type}"
        for refusal in ("4XX", "5XX"):
            assert responses[refusal]["content"]["application/json"]["schema"]["$ref"].endswith("Refusal"), name


def test_a_json_answer_is_an_envelope_and_an_openai_one_is_not(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    for name, operation in operations(spec):
        ref = operation["responses"]["200"]["content"].get("application/json", {}).get("schema", {}).get("$ref")
        if ref is None:
            continue
        shape = schemas[ref.rsplit("/", 1)[1]]
        openai = is_openai_path(name.split(" ", 1)[1])
        assert (set(shape["required"]) == {"code", "message", "data"}) != openai, name
        assert shape["additionalProperties"] is False, name


def test_a_key_with_a_default_is_on_the_wire_only_when_it_was_given() -> None:
    plain = paragraph_out(common_pb2.Paragraph(id="p1", score=0.81234))
    assert "rerank_score" not in plain.wire() and "matched_question" not in plain.wire()
    reranked = paragraph_out(common_pb2.Paragraph(id="p1", rerank_score=0.0, matched_question="年假几天"))
    assert list(reranked.wire())[-2:] == ["rerank_score", "matched_question"]
    assert reranked.wire()["rerank_score"] == 0.0, "a score of zero was given: it is sent"


def test_a_null_is_sent_as_a_null() -> None:
    assert dataset_out(retrieval_pb.Dataset(id="d1")).wire()["embedding_switch"] is None


def test_a_key_the_shape_does_not_name_is_refused_when_the_object_is_built() -> None:
    fields = paragraph_out(common_pb2.Paragraph(id="p1")).wire()
    with pytest.raises(ValidationError, match="surprise"):  # mypy refuses ``ParagraphOut(surprise=…)`` already
        ParagraphOut.model_validate({**fields, "surprise": 1})
