"""The names a document's status and an ingestion job's state are stored under.

A document's status is the wire name of ``kb.retrieval.v1.DocumentStatus``; a job has one more
ending, ``cancelled``, which its document shows as ready (an earlier version serves) or failed.
"""

from __future__ import annotations

from kb.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.vocabulary import DOCUMENT_STATUS


class DocumentState:
    QUEUED = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_QUEUED)
    PARSING = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_PARSING)
    EMBEDDING = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_EMBEDDING)
    READY = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_READY)
    FAILED = DOCUMENT_STATUS.name(pb.DOCUMENT_STATUS_FAILED)


class JobState(DocumentState):
    CANCELLED = "cancelled"


ACTIVE = (JobState.QUEUED, JobState.PARSING, JobState.EMBEDDING)
