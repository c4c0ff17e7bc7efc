"""The names a document's status and an ingestion job's state are stored under.

A document's status is the wire name of ``kb.retrieval.v1.DocumentStatus``; a job that is
cancelled leaves its document ready when an earlier version serves, else cancelled.
"""

from __future__ import annotations

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.vocabulary import DOCUMENT_STATUS


class DocumentState:
    QUEUED = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_QUEUED)
    PARSING = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_PARSING)
    EMBEDDING = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_EMBEDDING)
    READY = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_READY)
    FAILED = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_FAILED)
    CANCELLED = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_CANCELLED)


class JobState(DocumentState):
    """A job's states are its document's (a job never reads ``ready`` without its document)."""


ACTIVE = (JobState.QUEUED, JobState.PARSING, JobState.EMBEDDING)
