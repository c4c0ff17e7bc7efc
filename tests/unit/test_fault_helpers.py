"""The fault suite's small parts, one function at a time: the supervisor's backoff, which database
errors are an outage and the NUL check over every string of a request."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.faults import DATABASE_UNAVAILABLE, as_unavailable, is_outage
from kbcore.errors import InvalidRequest, Unavailable
from kbcore.rpc.guard import refuse_nul
from tools.supervise import Backoff

pytestmark = pytest.mark.fault


def test_the_restart_backoff_doubles_to_ten_seconds_and_resets_after_a_healthy_minute() -> None:
    """A service that keeps dying is restarted ever more slowly, never in a tight loop; one
    that ran for a minute starts again from the shortest wait."""
    backoff = Backoff()
    assert [backoff.next_delay(ran_for=1.0) for _ in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert backoff.next_delay(ran_for=61.0) == 0.5
    assert backoff.next_delay(ran_for=2.0) == 1.0


def test_connection_level_database_errors_are_an_outage_and_lose_their_text() -> None:
    """What a refused or dropped connection raises is Unavailable with a generic message;
    a constraint or a bug is not an outage."""
    refused = ConnectionRefusedError('connection to server at "db" (10.0.0.5), port 5432 failed')
    outages = [
        OperationalError("SELECT 1", {}, refused),
        InterfaceError("SELECT 1", {}, Exception("connection already closed")),
        DBAPIError("SELECT 1", {}, Exception("server closed the connection"), connection_invalidated=True),
        PoolTimeout("QueuePool limit of size 10 overflow 10 reached"),
    ]
    for error in outages:
        assert is_outage(error), error
        translated = as_unavailable(error)
        assert isinstance(translated, Unavailable) and translated.words == DATABASE_UNAVAILABLE
    not_outages: list[Exception] = [IntegrityError("INSERT", {}, Exception("duplicate")), RuntimeError("bug")]
    for other in not_outages:
        assert not is_outage(other) and as_unavailable(other) is other


def test_nul_is_found_in_nested_repeated_and_map_fields() -> None:
    """Every string of a request is checked, wherever it sits; the error names the field."""
    nested = chat_pb.AskRequest(chat_id="c", message="问")
    nested.client_history.messages.add(role=common_pb2.ROLE_USER, content="前\x00文")
    with pytest.raises(InvalidRequest, match=r"^client_history\.messages\.content must not contain NUL"):
        refuse_nul(nested)
    refuse_nul(chat_pb.AskRequest(chat_id="c", message="问：年假有几天？"))  # clean text passes
    in_map = struct_pb2.Struct()
    in_map.update({"键": "值\x00"})
    with pytest.raises(InvalidRequest, match=r"^fields\.string_value must not contain NUL"):
        refuse_nul(in_map)
    key_only = struct_pb2.Struct()
    key_only.update({"键\x00": 1})
    with pytest.raises(InvalidRequest, match=r"^fields must not contain NUL"):
        refuse_nul(key_only)
