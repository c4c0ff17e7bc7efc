"""DatasetService: datasets created, listed, changed (their embedding model too) and deleted;
deleting one detaches it from the applications that named it. A person (``current_principal``)
sees only the datasets granted to them, unless an administrator, and is granted what they create."""

from __future__ import annotations

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from kbcore.permissions.roles import sees_everything
from kbcore.rpc.error_mapping import Context, unary_errors
from services.retrieval.caller_check import current_principal
from services.retrieval.catalog.dataset_admin import DatasetAdmin
from services.retrieval.catalog.document_lifecycle import DocumentLifecycle


class DatasetRpcs(pb_grpc.DatasetServiceServicer):
    def __init__(self, datasets: DatasetAdmin, lifecycle: DocumentLifecycle):
        """``datasets`` keeps each dataset with its embedding model; ``lifecycle`` deletes one with its documents."""
        self._datasets = datasets
        self._lifecycle = lifecycle

    @unary_errors
    async def CreateDataset(self, request: pb.CreateDatasetRequest, context: Context) -> pb.CreateDatasetResponse:
        return pb.CreateDatasetResponse(dataset=await self._datasets.create(request, current_principal()))

    @unary_errors
    async def ListDatasets(self, request: pb.ListDatasetsRequest, context: Context) -> pb.ListDatasetsResponse:
        principal = current_principal()
        only = None if principal is None or sees_everything(principal) else principal.datasets
        return pb.ListDatasetsResponse(datasets=await self._datasets.views(only))

    @unary_errors
    async def UpdateDataset(self, request: pb.UpdateDatasetRequest, context: Context) -> pb.UpdateDatasetResponse:
        return pb.UpdateDatasetResponse(dataset=await self._datasets.update(request))

    @unary_errors
    async def DeleteDataset(self, request: pb.DeleteDatasetRequest, context: Context) -> pb.DeleteDatasetResponse:
        detached = await self._lifecycle.delete_dataset(request.dataset_id)
        return pb.DeleteDatasetResponse(
            detached_applications=[pb.DetachedApplication(id=a.id, name=a.name) for a in detached]
        )
