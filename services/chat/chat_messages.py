"""Conversions between the chat service's rows and its protobuf messages."""

from __future__ import annotations

from typing import Any

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.tables import Application, ChatRecord
from kbcore.errors import InvalidRequest
from kbcore.limits import (
    DEFAULT_SEARCH_MODE,
    DEFAULT_SIMILARITY,
    DEFAULT_TOP_N,
    MAX_DIALOGUE_NUMBER,
    MAX_RECORD_ID,
    MAX_TOP_N,
)
from kbcore.models.base import PartSupport, SupportQuote
from kbcore.refusals.status_details import stored_fields
from kbcore.settings import clamp
from kbcore.vocabulary import PART_VERDICT, RECORD_SOURCE, RECORD_STATUS, SEARCH_MODE
from kbcore.words.said import said
from services.chat.chat_list import ChatEntry
from services.chat.record_details import loaded
from services.chat.share_page import page_fields, page_message


def record_id(raw: str) -> int:
    """A record id as callers send it (text on the wire, a BIGINT in SQL), checked once for every
    RPC that names a record, so a hostile id is a clear INVALID_ARGUMENT and never an SQL overflow."""
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19 and 1 <= int(raw) <= MAX_RECORD_ID):
        raise InvalidRequest(
            said("record_id_must_be_number_between", max_record_id=MAX_RECORD_ID, raw_40=f"{raw[:40]!r}")
        )
    return int(raw)


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
        model_setting=pb.ModelSetting(
            prompt=str(model.get("prompt", "")),
            system=str(model.get("system", "")),
            chat_model_id=str(model.get("chat_model_id", "")),
            aux_model_id=str(model.get("aux_model_id", "")),
            rerank_model_id=str(model.get("rerank_model_id", "")),
        ),
        created_at=_timestamp(row.created_at),
        updated_at=_timestamp(row.updated_at),
        page=page_message(row.page_setting or {}),
    )


def public_application(application: pb.Application) -> pb.Application:
    """What a share-link visitor may read: the chat page's title, description and page
    settings, never the prompts, datasets or search settings."""
    return pb.Application(
        id=application.id, name=application.name, description=application.description, page=application.page
    )


def chat_summary(entry: ChatEntry) -> pb.ChatSummary:
    return pb.ChatSummary(
        id=entry.id,
        application_id=entry.application_id,
        abstract=entry.abstract,
        record_count=entry.record_count,
        created_at=_timestamp(entry.created_at),
        updated_at=_timestamp(entry.last_asked_at),
    )


def application_fields(message: pb.Application) -> dict[str, Any]:
    """Validated column values from a message; unset search fields take the defaults."""
    name = message.name.strip()
    if not name:
        raise InvalidRequest(said("application_name_must_not_be_empty"))
    if len(name) > 200:
        raise InvalidRequest(said("application_name_longer_200_characters"))
    search = message.search
    top_n = search.top_n or DEFAULT_TOP_N
    if not 1 <= top_n <= MAX_TOP_N:
        raise InvalidRequest(said("dataset_setting_top_n_must_be", max_top_n=MAX_TOP_N, top_n=top_n))
    similarity = search.similarity if search.HasField("similarity") else DEFAULT_SIMILARITY
    if not 0.0 <= similarity <= 1.0:
        raise InvalidRequest(said("dataset_setting_similarity_must_be_between", similarity=f"{similarity:g}"))
    if search.search_mode and not SEARCH_MODE.name(search.search_mode):
        raise InvalidRequest(said("unknown_dataset_setting_search_mode", search_search_mode=search.search_mode))
    return {
        "name": name,
        "description": message.description,
        "dataset_ids": list(dict.fromkeys(d.strip() for d in message.dataset_ids if d.strip())),
        "dialogue_number": int(clamp(message.dialogue_number, 0, MAX_DIALOGUE_NUMBER)),
        "search_setting": {
            "top_n": top_n,
            "similarity": round(float(similarity), 4),
            "search_mode": SEARCH_MODE.name(search.search_mode) or DEFAULT_SEARCH_MODE,
        },
        "model_setting": {
            "prompt": message.model_setting.prompt,
            "system": message.model_setting.system,
            # Registered models; "" = the deployment's, checked by ModelAdmin.check_choice.
            "chat_model_id": message.model_setting.chat_model_id.strip(),
            "aux_model_id": message.model_setting.aux_model_id.strip(),
            "rerank_model_id": message.model_setting.rerank_model_id.strip(),  # "" = no rerank
        },
        # Unset: the page settings stay as they are (a client that does not know them keeps them).
        **({"page_setting": page_fields(message.page)} if message.HasField("page") else {}),
    }


def record_message(row: ChatRecord, *, operator_view: bool = False) -> pb.ChatRecord:
    """A stored record as the wire carries it. The cause of a failure (``error_detail``) is the
    operator's: only the conversation log (``operator_view``) reads it; a chat page's reads, an
    export and every other reader get the record's ``error`` alone."""
    details = loaded(row.details)
    if not operator_view:
        details.ClearField("error_detail")
    fill_verdicts(details.retrieval)
    return pb.ChatRecord(
        id=str(row.id),
        chat_id=row.chat_id,
        question=row.question,
        answer=row.answer,
        status=RECORD_STATUS.value(row.status, default=common_pb2.RECORD_STATUS_UNSPECIFIED),
        details=details,
        source=RECORD_SOURCE.value(row.source, default=common_pb2.RECORD_SOURCE_UNSPECIFIED),
        message_tokens=row.message_tokens,
        answer_tokens=row.answer_tokens,
        **stored_fields("error", row.error),
        run_time=row.run_time,
        created_at=_timestamp(row.created_at),
        updated_at=_timestamp(row.updated_at),
    )


def part_support(result: common_pb2.RetrievalResult) -> list[PartSupport]:
    """The retrieval service's verdict on which sentences answer which part (offline model)."""
    return [
        PartSupport(
            part.part,
            tuple(SupportQuote(q.paragraph_id, q.document_name, q.sentence, q.score) for q in part.quotes),
            part.verified,
        )
        for part in result.part_support
    ]


def fill_verdicts(result: common_pb2.RetrievalResult) -> None:
    """Parts saved before their verdict was kept get it from their quotes, decided as the
    retrieval service decides it (``PartSupport.verdict``), so readers of a record never see
    a part without one."""
    for message, support in zip(result.part_support, part_support(result), strict=True):
        if message.verdict == common_pb2.PART_VERDICT_UNSPECIFIED:
            message.verdict = PART_VERDICT.value(support.verdict)
