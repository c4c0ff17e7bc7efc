"""The one rule of embeddings per dataset that two services check: the datasets searched
together (an application's) use one embedding model, because vectors of different models do
not share a space and their cosines cannot be compared or merged.

The chat service checks it when an application's datasets are set; the retrieval service when
a dataset's model changes and when a search names datasets. The message is the same in each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.words.said import Said, listed, said

RUNNING_SWITCH = (retrieval_pb.EMBEDDING_SWITCH_STATE_QUEUED, retrieval_pb.EMBEDDING_SWITCH_STATE_EMBEDDING)

DEFAULT_MODEL_LABEL = said("deployment_default_embedder")


@dataclass(frozen=True)
class DatasetModel:
    """A dataset and the embedding model it is (or is about to be) searched with."""

    dataset_name: str
    model_id: str  # "" = the deployment's default
    model_name: str = ""  # the registered model's name, for the message
    # The model a running change is moving it to (None: no change running): such a dataset
    # matches only datasets making the same move, or the application would mix models at its end.
    switching_to: str | None = None

    @property
    def label(self) -> Said:
        served = model_label(self.model_id, self.model_name)
        if self.switching_to is None:
            return served
        return said("model_being_changed", served=served, target=model_label(self.switching_to, ""))


def model_label(model_id: str, model_name: str) -> Said:
    if not model_id:
        return DEFAULT_MODEL_LABEL
    return said("embedding_model_2", model_name=f"{model_name!r}" if model_name else model_id)


def mixed_models(datasets: Sequence[DatasetModel]) -> Said | None:
    """Why these datasets cannot be searched together, or None when they can."""
    if len({(d.model_id, d.switching_to) for d in datasets}) <= 1:
        return None
    uses = [said("dataset_uses_model", dataset=f"{d.dataset_name!r}", model=d.label) for d in datasets]
    return said("these_datasets_use_different_embedding_models", listed=listed(uses))


def of_dataset(dataset: retrieval_pb.Dataset) -> DatasetModel:
    """What the rule needs of a dataset as the retrieval service lists it."""
    switch = dataset.embedding_switch
    running = dataset.HasField("embedding_switch") and switch.state in RUNNING_SWITCH
    return DatasetModel(
        dataset.name,
        dataset.embedding_model_id,
        dataset.embedding_model_name,
        switch.to_model_id if running else None,
    )
