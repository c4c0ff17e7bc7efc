"""Conversions between the chat service's rows and its protobuf messages."""

from __future__ import annotations

from typing import Any

from kb.chat.v1 import chat_service_pb2 as pb
from kb.common.v1 import common_pb2
from kbcore.db.models import Application, ChatRecord
from kbcore.errors import InvalidRequest
from kbcore.limits import DEFAULT_SEARCH_MODE, DEFAULT_SIMILARITY, DEFAULT_TOP_N, MAX_TOP_N
from kbcore.settings import clamp
from kbcore.vocabulary import RECORD_STATUS, SEARCH_MODE
from services.chat.details import loaded


def _timestamp(value: Any) -> str:
    return value.isoformat() + "Z" if value is not None else ""


def application_message(row: Application) -> pb.Application:
    search: dict[str, Any] = {
        "top_n": DEFAULT_TOP_N,
        "similarity": DEFAULT_SIMILARITY,
        "search_mode": DEFAULT_SEARCH_MODE,
        **(row.search_setting or {}),
    }
    model = row.model_setting or {}
    return pb.Application(
        id=row.id,
        name=row.name,
        description=row.description,
        dataset_ids=list(row.dataset_ids or []),
        dialogue_number=row.dialogue_number,
        search=common_pb2.SearchSettings(
            top_n=int(search["top_n"]),
            similarity=float(search["similarity"]),
            search_mode=SEARCH_MODE.value(str(search["search_mode"])),
        ),
        model_setting=pb.ModelSetting(prompt=str(model.get("prompt", "")), system=str(model.get("system", ""))),
        created_at=_timestamp(row.created_at),
        updated_at=_timestamp(row.updated_at),
    )


def application_fields(message: pb.Application) -> dict[str, Any]:
    """Validated column values from a message; unset search fields take the defaults."""
    name = message.name.strip()
    if not name:
        raise InvalidRequest("application name must not be empty")
    if len(name) > 200:
        raise InvalidRequest("application name is longer than 200 characters")
    search = message.search
    top_n = search.top_n or DEFAULT_TOP_N
    if not 1 <= top_n <= MAX_TOP_N:
        raise InvalidRequest(f"dataset_setting.top_n must be between 1 and {MAX_TOP_N}, got {top_n}")
    similarity = search.similarity if search.HasField("similarity") else DEFAULT_SIMILARITY
    if not 0.0 <= similarity <= 1.0:
        raise InvalidRequest(f"dataset_setting.similarity must be between 0 and 1, got {similarity:g}")
    if search.search_mode and not SEARCH_MODE.name(search.search_mode):
        raise InvalidRequest(f"unknown dataset_setting.search_mode {search.search_mode}")
    return {
        "name": name,
        "description": message.description,
        "dataset_ids": list(dict.fromkeys(d.strip() for d in message.dataset_ids if d.strip())),
        "dialogue_number": int(clamp(message.dialogue_number, 0, 20)),
        "search_setting": {
            "top_n": top_n,
            "similarity": round(float(similarity), 4),
            "search_mode": SEARCH_MODE.name(search.search_mode) or DEFAULT_SEARCH_MODE,
        },
        "model_setting": {"prompt": message.model_setting.prompt, "system": message.model_setting.system},
    }


def record_message(row: ChatRecord) -> pb.ChatRecord:
    return pb.ChatRecord(
        id=str(row.id),
        chat_id=row.chat_id,
        question=row.question,
        answer=row.answer,
        status=RECORD_STATUS.value(row.status, default=common_pb2.RECORD_STATUS_UNSPECIFIED),
        details=loaded(row.details),
        message_tokens=row.message_tokens,
        answer_tokens=row.answer_tokens,
        error=row.error,
        run_time=row.run_time,
        created_at=_timestamp(row.created_at),
        updated_at=_timestamp(row.updated_at),
    )
