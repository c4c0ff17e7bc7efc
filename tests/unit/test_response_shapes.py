"""The response shapes in ``/openapi.json``: every operation says what its 200 is and how it
refuses (never FastAPI's 422, which the gateway does not send), and the shapes match the wire
the golden files hold, key for key."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from gateway.app import create_app
from gateway.backends import Backends
from gateway.errors import is_openai_path
from gateway.shapes.answers import RecordOut, RecordPageOut, RetrievalOut
from gateway.shapes.envelope import Envelope
from kbcore.settings import Settings

GOLDEN = Path(__file__).resolve().parents[1] / "e2e" / "golden"
# The golden files' placeholders for what varies between runs, back as values of their type.
PLACEHOLDERS = {b"<tokens>": b"1", b"<seconds>": b"0.5", b"<score>": b"0.03"}
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


def golden(name: str) -> bytes:
    raw = (GOLDEN / name).read_bytes()
    for placeholder, value in PLACEHOLDERS.items():
        raw = raw.replace(placeholder, value)
    return re.sub(rb"<(?:id|record)-\d+>", b"x", raw)


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("record.json", Envelope[RecordOut]),
        ("record_list.json", Envelope[RecordPageOut]),
        ("no_datasets_records.json", Envelope[RecordPageOut]),
        ("hit_test_rounds.json", Envelope[RetrievalOut]),
    ],
)
def test_the_shapes_match_the_captured_wire(name: str, shape: type[BaseModel]) -> None:
    parsed = shape.model_validate_json(golden(name), strict=True)
    assert parsed.model_dump(exclude_unset=True) == json.loads(golden(name)), "every key on the wire is in the shape"


def test_a_key_the_shape_does_not_name_is_a_drift() -> None:
    answer = json.loads(golden("record.json"))
    answer["data"]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        Envelope[RecordOut].model_validate(answer)
