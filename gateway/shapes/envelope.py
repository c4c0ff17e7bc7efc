"""MaxKB's envelope around every JSON answer, the refusals' shapes, and the ``responses=``
entries for what is not one JSON object (event streams, files)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

Data = TypeVar("Data")


class Shape(BaseModel):
    """A JSON object on the wire: exactly these keys, in this order (a key the shape does not
    name is refused when the object is built)."""

    model_config = ConfigDict(extra="forbid")

    def wire(self) -> dict[str, Any]:
        """The object as it is sent: a field with a default is on the wire only when it was given
        (a paragraph's ``rerank_score`` only when a rerank model scored it), so an absent key and
        a null stay two different answers. The field types are JSON's own, so the values are
        sent as they are."""
        return self.model_dump(exclude_unset=True)


class Envelope(Shape, Generic[Data]):
    """A success: ``code`` 200, ``message`` "成功" and the answer in ``data``."""

    code: int
    message: str
    data: Data


class Refusal(Shape):
    """Every refusal of a MaxKB-shaped route: ``code`` is the HTTP status, ``data`` null."""

    code: int
    message: str
    data: None


class OpenAIErrorDetail(Shape):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIRefusal(Shape):
    """Every refusal of an OpenAI-compatible route, as OpenAI's SDKs read one."""

    error: OpenAIErrorDetail


def _refusals(model: type[BaseModel]) -> dict[int | str, dict[str, Any]]:
    return {
        "4XX": {"model": model, "description": "refused: bad input, no or wrong credentials, unknown id, limits"},
        "5XX": {"model": model, "description": "a backend service failed, is unavailable, or is out of disk"},
    }


# Router-wide ``responses=``: also keeps FastAPI from listing a 422 the gateway never sends
# (its validation errors are 400s in the envelope).
REFUSALS = _refusals(Refusal)
OPENAI_REFUSALS = _refusals(OpenAIRefusal)
TEXT = {"schema": {"type": "string"}}


def event_stream(description: str, event: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """A 200 that is a ``text/event-stream`` (server-sent events); ``event`` is the schema of
    one event (``gateway.shapes.streams``)."""
    return {200: {"description": description, "content": {"text/event-stream": {"schema": event}}}}


def download(description: str, *media_types: str) -> dict[int | str, dict[str, Any]]:
    """A 200 that is a file (CSV, XLSX) rather than JSON."""
    return {200: {"description": description, "content": dict.fromkeys(media_types, TEXT)}}
