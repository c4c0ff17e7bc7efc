"""Each backend's gRPC stubs, gathered per backend.

The chat and retrieval services each serve several small proto services (answering, access,
models, ...; searching, datasets, documents, paragraphs) on one port. A caller opens one channel
per backend and holds one of these, so that call sites name the part of the API they use
(``chat.answers.Ask``, ``retrieval.documents.GetDocument``) without managing a stub per service.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from grpc_stubs.retrieval.v1 import retrieval_service_pb2_grpc as retrieval_grpc


@dataclass(frozen=True)
class ChatStubs:
    answers: chat_grpc.AnswerServiceStub
    applications: chat_grpc.ApplicationServiceStub
    access: chat_grpc.AccessServiceStub
    operations: chat_grpc.OperationsServiceStub
    models: chat_grpc.ModelServiceStub
    users: chat_grpc.UserServiceStub

    @classmethod
    def of(cls, channel: grpc.aio.Channel) -> ChatStubs:
        return cls(
            answers=chat_grpc.AnswerServiceStub(channel),
            applications=chat_grpc.ApplicationServiceStub(channel),
            access=chat_grpc.AccessServiceStub(channel),
            operations=chat_grpc.OperationsServiceStub(channel),
            models=chat_grpc.ModelServiceStub(channel),
            users=chat_grpc.UserServiceStub(channel),
        )


@dataclass(frozen=True)
class RetrievalStubs:
    search: retrieval_grpc.SearchServiceStub
    datasets: retrieval_grpc.DatasetServiceStub
    documents: retrieval_grpc.DocumentServiceStub
    paragraphs: retrieval_grpc.ParagraphServiceStub

    @classmethod
    def of(cls, channel: grpc.aio.Channel) -> RetrievalStubs:
        return cls(
            search=retrieval_grpc.SearchServiceStub(channel),
            datasets=retrieval_grpc.DatasetServiceStub(channel),
            documents=retrieval_grpc.DocumentServiceStub(channel),
            paragraphs=retrieval_grpc.ParagraphServiceStub(channel),
        )
