"""ModelService: the registered model endpoints, changed by administrators only and listed to
every signed-in user (who chooses one for an application); the rules are
``services.chat.admin.model_admin``. No response ever carries an API key: only ``key_hint``."""

from __future__ import annotations

from collections.abc import Sequence

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from kbcore.db.tables import Application, ModelEndpoint
from kbcore.models.check import check_endpoint
from kbcore.permissions.roles import Need
from kbcore.rpc.error_mapping import Context, unary_errors
from services.chat.access.rules import require
from services.chat.admin.model_admin import EndpointFields, ModelAdmin, users_of
from services.chat.callers.chat_caller import current_caller
from services.chat.chat_messages import _timestamp


def model_info(row: ModelEndpoint, applications: Sequence[Application] = ()) -> pb.ModelInfo:
    return pb.ModelInfo(
        id=row.id,
        name=row.name,
        provider=row.provider,
        base_url=row.base_url,
        model=row.model,
        purpose=row.purpose,
        key_hint=row.key_hint,
        created_at=_timestamp(row.created_at),
        updated_at=_timestamp(row.updated_at),
        application_ids=users_of(applications, row.id),
    )


def _optional(request: pb.UpdateModelRequest, name: str) -> str | None:
    return str(getattr(request, name)) if request.HasField(name) else None


class ModelRpcs(pb_grpc.ModelServiceServicer):
    def __init__(self, model_admin: ModelAdmin, deployment_chat_offline: bool):
        """``deployment_chat_offline``: the deployment's own chat model is the offline one, which
        the operator page says at the top until a chat model is registered."""
        self._model_admin = model_admin
        self._deployment_chat_offline = deployment_chat_offline

    @unary_errors
    async def CreateModel(self, request: pb.CreateModelRequest, context: Context) -> pb.ModelInfo:
        require(current_caller(), Need.ADMIN)
        fields = EndpointFields(
            name=request.name,
            provider=request.provider,
            base_url=request.base_url,
            model=request.model,
            purpose=request.purpose,
            api_key=request.api_key,
        )
        return model_info(await self._model_admin.create(fields))

    @unary_errors
    async def ListModels(self, request: pb.ListModelsRequest, context: Context) -> pb.ListModelsResponse:
        require(current_caller(), Need.MODEL_READ)
        rows, applications = await self._model_admin.listed(request.purpose)
        return pb.ListModelsResponse(
            models=[model_info(r, applications) for r in rows], deployment_chat_offline=self._deployment_chat_offline
        )

    @unary_errors
    async def UpdateModel(self, request: pb.UpdateModelRequest, context: Context) -> pb.ModelInfo:
        require(current_caller(), Need.ADMIN)
        names = ("name", "provider", "base_url", "model", "purpose", "api_key")
        fields = EndpointFields(**{n: _optional(request, n) for n in names})
        row = await self._model_admin.update(request.id, fields)
        _, applications = await self._model_admin.listed()
        return model_info(row, applications)

    @unary_errors
    async def DeleteModel(self, request: pb.DeleteModelRequest, context: Context) -> pb.DeleteModelResponse:
        require(current_caller(), Need.ADMIN)
        await self._model_admin.delete(request.id)
        return pb.DeleteModelResponse()

    @unary_errors
    async def CheckModel(self, request: pb.CheckModelRequest, context: Context) -> pb.CheckModelResponse:
        require(current_caller(), Need.ADMIN)
        row = await self._model_admin.get(request.id)
        result = await check_endpoint(
            base_url=row.base_url, api_key=self._model_admin.api_key(row), model=row.model, purpose=row.purpose
        )
        return pb.CheckModelResponse(ok=result.ok, message=result.message)
