"""A question's ending, as the metrics count it (``kbcore.metrics``): once per question, from
the result its record is saved with."""

from __future__ import annotations

from grpc_stubs.common.v1 import common_pb2
from kbcore.metrics.catalog import observe_question
from kbcore.vocabulary import STOP_REASON


def observe_ended(status: str, retrieval: common_pb2.RetrievalResult | None) -> None:
    """Count the question by stop reason and status; its rounds and evidence when retrieval ran
    (a stopped question's partial rounds count: they ran)."""
    if retrieval is None:
        observe_question(status, "", None, None)
        return
    observe_question(status, STOP_REASON.name(retrieval.stop_reason), len(retrieval.rounds), len(retrieval.paragraphs))
