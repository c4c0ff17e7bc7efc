"""Builds the context gRPC server from settings and its dependencies."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from grpc_stubs.context.v1 import context_service_pb2, context_service_pb2_grpc
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.lease import LeaseStore
from kbcore.models.base import ModelClient
from kbcore.models.endpoints import EndpointClients
from kbcore.models.factory import model_client_for
from kbcore.rpc.bootstrap import RunningServer, build_server
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings
from services.context.context_rpcs import ContextRpcs
from services.context.history import HistoryStore
from services.context.loader import ContextLoader

SERVICE_NAME = context_service_pb2.DESCRIPTOR.services_by_name["ContextService"].full_name


@dataclass
class ContextDeps:
    sessions: async_sessionmaker[AsyncSession]
    model: ModelClient
    engine: AsyncEngine | None = None
    # The registered models' clients, made by ``create_server``.
    endpoints: EndpointClients | None = None

    async def close(self) -> None:
        if self.endpoints is not None:
            await self.endpoints.aclose()
        await self.model.aclose()
        if self.engine is not None:
            await self.engine.dispose()


def open_deps(settings: Settings) -> ContextDeps:
    engine = create_engine(settings.resolved_database_url())
    model = model_client_for(settings)
    return ContextDeps(session_factory(engine), model, engine)


async def create_server(settings: Settings, deps: ContextDeps, port: int | None = None) -> RunningServer:
    history = HistoryStore(deps.sessions)
    loader = ContextLoader(
        history, LeaseStore(deps.sessions, settings.lock_ttl), deps.model, settings.context_recent_tokens
    )
    deps.endpoints = EndpointClients(deps.sessions, settings)
    servicer = ContextRpcs(history, loader, deps.endpoints)

    def register(server: grpc.aio.Server) -> None:
        context_service_pb2_grpc.add_ContextServiceServicer_to_server(servicer, server)

    address = f"{settings.grpc_host}:{settings.context_port if port is None else port}"
    return await build_server(address, register, [SERVICE_NAME], service_credential(settings))
