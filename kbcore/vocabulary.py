"""The names the HTTP API, the CSV export, the CLI and the database use for proto enum values,
derived from the proto descriptors so that each list of names exists once: in the ``.proto``.

``STOP_REASON_NO_NEW_EVIDENCE`` is ``no_new_evidence``: the value's name without the enum's
prefix, in lower case. ``*_UNSPECIFIED`` has no name (an empty string).
"""

from __future__ import annotations

import re
from typing import Any, Generic, TypeVar, cast

from grpc_stubs.chat.v1 import chat_service_pb2
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2

Value = TypeVar("Value", bound=int)


class EnumNames(Generic[Value]):
    """Both directions between one proto enum's values and their wire names."""

    def __init__(self, enum_type: Any) -> None:
        descriptor = enum_type.DESCRIPTOR
        prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", descriptor.name).upper() + "_"
        self._names: dict[int, str] = {
            int(v.number): str(v.name).removeprefix(prefix).lower() for v in descriptor.values if v.number
        }
        self._values: dict[str, int] = {name: number for number, name in self._names.items()}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._names.values())

    def name(self, value: int) -> str:
        """The wire name; "" for the unspecified value (or one this build does not know)."""
        return self._names.get(value, "")

    def value(self, name: str, default: Value | None = None) -> Value:
        """The enum value for a wire name; ``default``, or ``KeyError`` without one, for an unknown name."""
        if name in self._values or default is None:
            return cast(Value, self._values[name])
        return default


STOP_REASON: EnumNames[common_pb2.StopReason] = EnumNames(common_pb2.StopReason)
RECORD_STATUS: EnumNames[common_pb2.RecordStatus] = EnumNames(common_pb2.RecordStatus)
RECORD_SOURCE: EnumNames[common_pb2.RecordSource] = EnumNames(common_pb2.RecordSource)
SEARCH_MODE: EnumNames[common_pb2.SearchMode] = EnumNames(common_pb2.SearchMode)
ROLE: EnumNames[common_pb2.Role] = EnumNames(common_pb2.Role)
PART_VERDICT: EnumNames[common_pb2.PartVerdict] = EnumNames(common_pb2.PartVerdict)
DOCUMENT_STATUS: EnumNames[retrieval_service_pb2.DocumentStatus] = EnumNames(retrieval_service_pb2.DocumentStatus)
SYNC_OUTCOME: EnumNames[retrieval_service_pb2.SyncOutcome] = EnumNames(retrieval_service_pb2.SyncOutcome)
EMBEDDING_SWITCH_STATE: EnumNames[retrieval_service_pb2.EmbeddingSwitchState] = EnumNames(
    retrieval_service_pb2.EmbeddingSwitchState
)
LOG_SOURCE: EnumNames[chat_service_pb2.LogSource] = EnumNames(chat_service_pb2.LogSource)
VOTE: EnumNames[chat_service_pb2.Vote] = EnumNames(chat_service_pb2.Vote)
PROGRESS_MODE: EnumNames[chat_service_pb2.ProgressMode] = EnumNames(chat_service_pb2.ProgressMode)
