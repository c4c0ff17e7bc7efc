"""Model endpoints the operator registers, on MaxKB v1's routes
(apps/setting/urls.py: ``model``, ``model/<model_id>``; body from
serializers/provider_serializers.py: ``name``, ``provider``, ``model_name``,
``credential: {api_base, api_key}``).

- ``GET /api/model`` (``?purpose=chat|auxiliary|embedding|rerank``): the models, by name.
- ``GET /api/model/deployment``: whether the deployment's own chat model (what an application
  with none chosen answers with) is the offline one, and how many chat models are registered:
  the operator page's first-run notice.
- ``POST /api/model``: register one. MaxKB's ``model_type`` (LLM / EMBEDDING / RERANKER) is
  ``purpose`` here, which also tells a chat model from an auxiliary one; ``provider`` is the
  endpoint's kind (openai, deepseek, dashscope, vllm, sglang, ollama, generic), not MaxKB's plugin name.
- ``PUT /api/model/{id}``: change what is sent; a ``credential.api_key`` that is absent keeps the
  stored key, but only at the same address: an ``api_base`` that moves elsewhere (scheme, host,
  port or path; case, a default port and a trailing slash do not count) without the key is
  refused (400), so a stored key never goes to an address it was not entered for (MaxKB keeps
  it there). ``DELETE /api/model/{id}``: refused (409) while an application uses it.
- ``POST /api/model/{id}/check`` (MaxKB validates on save; here it is its own action, so a model
  can be registered before its endpoint is up): one small real call, ``{ok, message}``.

The API key is never returned: responses carry only ``key_hint`` ("…a1b2"). MaxKB returns the
credential masked; here not even that, so a form that sends back what it read cannot store a
mask as the key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints

from gateway.backends import CallerBackend
from gateway.errors import ok
from gateway.presenter import model_out
from gateway.shapes.applications import DeploymentModelsOut, ModelCheckOut, ModelOut
from gateway.shapes.envelope import REFUSALS, Envelope
from grpc_stubs.chat.v1 import chat_service_pb2 as pb

router = APIRouter(prefix="/api/model", tags=["model"], responses=REFUSALS)

# The chat service checks both against its lists and says which values it takes.
Provider = Annotated[str, StringConstraints(max_length=16)]
Purpose = Annotated[str, StringConstraints(max_length=16)]


class CredentialIn(BaseModel):
    api_base: str = Field(
        min_length=1, max_length=500, description="the OpenAI-compatible base URL, e.g. https://api.openai.com/v1"
    )
    api_key: str | None = Field(default=None, max_length=500, description="stored encrypted; never shown again")


class ModelIn(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    provider: Provider = "generic"
    model_name: str = Field(min_length=1, max_length=200, description="the model id the endpoint knows")
    purpose: Purpose = "chat"
    credential: CredentialIn


class ModelEditIn(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=100)
    provider: Provider | None = None
    model_name: str | None = Field(default=None, min_length=1, max_length=200)
    purpose: Purpose | None = None
    credential: CredentialIn | None = None


@router.get("/deployment", response_model=Envelope[DeploymentModelsOut])
async def deployment_models(backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.models.ListModels, pb.ListModelsRequest(purpose="chat"))
    return ok({"chat_offline": reply.deployment_chat_offline, "chat_models": len(reply.models)})


@router.get("", response_model=Envelope[list[ModelOut]])
async def list_models(backend: CallerBackend, purpose: Annotated[Purpose | None, Query()] = None) -> JSONResponse:
    reply = await backend.unary(backend.chat.models.ListModels, pb.ListModelsRequest(purpose=purpose or ""))
    return ok([model_out(m).wire() for m in reply.models])


@router.post("", response_model=Envelope[ModelOut])
async def create_model(body: ModelIn, backend: CallerBackend) -> JSONResponse:
    message = pb.CreateModelRequest(
        name=body.name,
        provider=body.provider,
        base_url=body.credential.api_base,
        model=body.model_name,
        purpose=body.purpose,
        api_key=body.credential.api_key or "",
    )
    reply = await backend.unary(backend.chat.models.CreateModel, message)
    return ok(model_out(reply).wire())


@router.put("/{model_id}", response_model=Envelope[ModelOut])
async def edit_model(model_id: str, body: ModelEditIn, backend: CallerBackend) -> JSONResponse:
    change = pb.UpdateModelRequest(id=model_id)
    for field, value in (
        ("name", body.name),
        ("provider", body.provider),
        ("model", body.model_name),
        ("purpose", body.purpose),
        ("base_url", body.credential.api_base if body.credential else None),
        ("api_key", body.credential.api_key if body.credential else None),
    ):
        if value is not None:
            setattr(change, field, value)
    reply = await backend.unary(backend.chat.models.UpdateModel, change)
    return ok(model_out(reply).wire())


@router.delete("/{model_id}", response_model=Envelope[bool])
async def delete_model(model_id: str, backend: CallerBackend) -> JSONResponse:
    await backend.unary(backend.chat.models.DeleteModel, pb.DeleteModelRequest(id=model_id))
    return ok(True)


@router.post("/{model_id}/check", response_model=Envelope[ModelCheckOut])
async def check_model(model_id: str, backend: CallerBackend) -> JSONResponse:
    # The check's own deadline plus room for the service: a slow endpoint is reported, not timed out here.
    reply = await backend.unary(
        backend.chat.models.CheckModel, pb.CheckModelRequest(id=model_id), timeout=backend.timeout + 20
    )
    return ok({"ok": reply.ok, "message": reply.message})
