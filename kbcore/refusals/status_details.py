"""A refusal's words in a gRPC status's structured details, the way gRPC's rich error model
carries them: the ``grpc-status-details-bin`` trailing metadata entry holds a
``google.rpc.Status`` whose details are a ``google.rpc.ErrorInfo`` (the message's code as its
reason, the text values as its metadata: what any gRPC client reads) and our ``Words`` (the code
and every value, words within words included: what the gateway shows from).

Words in the details are also how a receiver knows a status's words are one of our services'
(``kbcore.rpc.own_words``): grpc's own statuses carry none.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

from grpc_stubs.common.v1 import common_pb2
from kbcore.words.said import Said

DETAILS_KEY = "grpc-status-details-bin"
DOMAIN = "kb-chat"


def as_proto(words: Said) -> common_pb2.Words:
    """The words as the wire and the records' messages carry them."""
    message = common_pb2.Words(code=words.code)
    for name, value in words.values.items():
        if isinstance(value, Said):
            message.values[name].words.CopyFrom(as_proto(value))
        else:
            message.values[name].text = value
    return message


def from_proto(message: common_pb2.Words) -> Said:
    """Words from the wire (``as_proto``)."""
    values: dict[str, str | Said] = {}
    for name, value in message.values.items():
        values[name] = from_proto(value.words) if value.WhichOneof("value") == "words" else value.text
    return Said(message.code, values)


def details_entry(code: grpc.StatusCode, words: Said) -> tuple[str, bytes]:
    """The trailing metadata entry that carries ``words`` with a status of ``code``."""
    info = error_details_pb2.ErrorInfo(
        reason=words.code.upper(),
        domain=DOMAIN,
        metadata={name: value for name, value in words.values.items() if isinstance(value, str)},
    )
    details = []
    for detail in (info, as_proto(words)):
        packed = any_pb2.Any()
        packed.Pack(detail)
        details.append(packed)
    status = status_pb2.Status(code=code.value[0], message=str(words), details=details)
    return DETAILS_KEY, status.SerializeToString()


def words_in(metadata: Iterable[tuple[str, Any]] | None) -> Said | None:
    """The words a call's trailing metadata carries in its status details; None when it carries
    none (grpc's own status, or details that cannot be read)."""
    for key, value in metadata or ():
        if key != DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except DecodeError:  # unreadable details are no words, whoever sent them
            return None
        for detail in status.details:
            words = common_pb2.Words()
            if detail.Unpack(words):
                return from_proto(words)
    return None


def stored_fields(field: str, words: Said | None) -> dict[str, Any]:
    """A record's stored words as its message's two fields, ``field`` and ``<field>_words``: the
    English (what gRPC callers read; "" for none) and the words by code (None, left unset, for
    none). Passed to the message's constructor as keywords."""
    if words is None:
        return {field: "", f"{field}_words": None}
    return {field: str(words), f"{field}_words": as_proto(words)}
