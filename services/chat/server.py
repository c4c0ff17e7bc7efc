"""Builds the chat gRPC server from settings and its dependencies."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2, chat_service_pb2_grpc
from grpc_stubs.context.v1 import context_service_pb2_grpc
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.lease import LeaseStore
from kbcore.models.base import ModelClient
from kbcore.models.endpoints import EndpointClients
from kbcore.models.factory import model_client_for
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.rpc.bootstrap import RunningServer, build_server
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.secret_box import SecretBox
from kbcore.settings import Settings
from services.chat.access.access_rpcs import AccessRpcs
from services.chat.access.caller_interceptor import CallerInterceptor, CallerResolver
from services.chat.access.credentials import Credentials
from services.chat.access.rules import check_call
from services.chat.access.visitors import VisitorPolicy
from services.chat.accounts.personal_tokens import PersonalTokens
from services.chat.accounts.signin import SignIn
from services.chat.accounts.signin_throttle import SignInThrottle
from services.chat.accounts.user_rpcs import UserRpcs
from services.chat.accounts.user_store import UserStore
from services.chat.accounts.user_tokens import UserTokens
from services.chat.admin.model_admin import ModelAdmin
from services.chat.admin.model_rpcs import ModelRpcs
from services.chat.admin.operations_rpcs import OperationsRpcs
from services.chat.answering.answer_rpcs import AnswerRpcs
from services.chat.answering.ask import AskFlow, Upstreams
from services.chat.answering.running import RunningQuestions
from services.chat.answering.sweeper import keep_sweeping, sweep_once
from services.chat.application_rpcs import ApplicationRpcs
from services.chat.store import ChatStore

SERVICE_NAMES = tuple(service.full_name for service in chat_service_pb2.DESCRIPTOR.services_by_name.values())
# Exchanging a share link for a visitor token is how a visitor gets credentials at all, and
# signing in (a password or a one-time link) how a user does; the sites a share link's page may
# be framed by are read before anyone signs in. Every other call is checked
# against the permission table (kbcore.permissions.table) by the caller interceptor.
PUBLIC_METHODS = frozenset({"AuthenticateVisitor", "GetShareLinkSites", "SignIn", "RedeemSignInLink"})


@dataclass
class ChatDeps:
    sessions: async_sessionmaker[AsyncSession]
    model: ModelClient
    context_channel: grpc.aio.Channel
    retrieval_channel: grpc.aio.Channel
    engine: AsyncEngine | None = None
    # The registered models' clients, made by ``create_server``.
    endpoints: EndpointClients | None = None

    async def close(self) -> None:
        if self.endpoints is not None:
            await self.endpoints.aclose()
        await self.context_channel.close()
        await self.retrieval_channel.close()
        await self.model.aclose()
        if self.engine is not None:
            await self.engine.dispose()


def open_deps(settings: Settings) -> ChatDeps:
    engine = create_engine(settings.resolved_database_url())
    credential = service_credential(settings)
    return ChatDeps(
        sessions=session_factory(engine),
        model=model_client_for(settings),
        context_channel=open_channel(settings.target("context"), credential),
        retrieval_channel=open_channel(settings.target("retrieval"), credential),
        engine=engine,
    )


async def create_server(settings: Settings, deps: ChatDeps, port: int | None = None) -> RunningServer:
    store = ChatStore(deps.sessions)
    upstreams = Upstreams(
        context=context_service_pb2_grpc.ContextServiceStub(deps.context_channel),
        retrieval=RetrievalStubs.of(deps.retrieval_channel),
    )
    running = RunningQuestions()
    leases = LeaseStore(deps.sessions, settings.lock_ttl)
    deps.endpoints = EndpointClients(deps.sessions, settings)
    flow = AskFlow(settings, store, leases, upstreams, deps.model, running, deps.endpoints)
    credentials = Credentials(deps.sessions, VisitorPolicy.from_settings(settings))
    model_admin = ModelAdmin(
        deps.sessions, SecretBox.from_settings(settings), upstreams.retrieval, settings.rpc_timeout
    )
    user_tokens = UserTokens(deps.sessions, settings)
    users = UserStore(deps.sessions, user_tokens)
    resolver = CallerResolver(operator_token(settings), credentials, user_tokens)
    identify = CallerInterceptor(SERVICE_NAMES, resolver, PUBLIC_METHODS, check_call)
    answers = AnswerRpcs(store, flow, running, leases, credentials)
    applications = ApplicationRpcs(store, upstreams.retrieval, settings.rpc_timeout, model_admin)
    access = AccessRpcs(store, credentials, users)
    throttle = SignInThrottle(deps.sessions, settings.signin_failures, settings.signin_address_failures)
    sign_in = SignIn(users, user_tokens, throttle)
    accounts = UserRpcs(users, user_tokens, sign_in, PersonalTokens(deps.sessions))
    operations = OperationsRpcs(store, upstreams.retrieval, settings.rpc_timeout)
    models = ModelRpcs(model_admin, isinstance(deps.model, OfflineExtractiveModel))

    def register(server: grpc.aio.Server) -> None:
        chat_service_pb2_grpc.add_AnswerServiceServicer_to_server(answers, server)
        chat_service_pb2_grpc.add_ApplicationServiceServicer_to_server(applications, server)
        chat_service_pb2_grpc.add_AccessServiceServicer_to_server(access, server)
        chat_service_pb2_grpc.add_OperationsServiceServicer_to_server(operations, server)
        chat_service_pb2_grpc.add_ModelServiceServicer_to_server(models, server)
        chat_service_pb2_grpc.add_UserServiceServicer_to_server(accounts, server)

    address = f"{settings.grpc_host}:{settings.chat_port if port is None else port}"
    # Records a dead process left running are closed before this one serves, then once per TTL.
    await sweep_once(store)
    # After build_server's credential check and entry guard: NUL text is refused before the
    # caller's token is looked up, and what the lookup raises (a database outage) is mapped.
    running_server = await build_server(address, register, SERVICE_NAMES, service_credential(settings), [identify])
    running_server.background.append(asyncio.create_task(keep_sweeping(store, settings.lock_ttl)))
    return running_server
