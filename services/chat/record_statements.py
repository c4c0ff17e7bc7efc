"""The statements every question runs against its chat and record, built once, beside the store
(``services.chat.store``) that runs them for the answering flow.

Core statements on the tables with bound parameters: SQLAlchemy compiles each once and finds
it in its cache by a key computed once, where an ORM statement built per call was rebuilt,
re-keyed and passed through the ORM's bulk-update path every time, which cost the chat service
more CPU per question than SQLite's own work. Values that vary in shape (a finished record's
columns) go in as execution parameters of a statement without a SET clause: each shape is
compiled once.
"""

from __future__ import annotations

from sqlalchemy import Table, and_, bindparam, insert, or_, select, update

from kbcore.db.lease import INTERRUPTED_ERROR
from kbcore.db.tables import RECORD_TABLE as RECORDS
from kbcore.db.tables import Application, Chat, RecordStatus

CHATS: Table = Chat.__table__  # type: ignore[assignment]

# The chat and its application, read by every question (ORM entities: the flow reads their settings).
CHAT_AND_APPLICATION = (
    select(Chat, Application)
    .join(Application, Application.id == Chat.application_id)
    .where(Chat.id == bindparam("b_chat_id"))
)
# Records an earlier holder left running (taking the lease proved it gone).
INTERRUPT_RUNNING = (
    update(RECORDS)
    .where(RECORDS.c.chat_id == bindparam("b_chat_id"), RECORDS.c.status == RecordStatus.RUNNING)
    .values(status=RecordStatus.INTERRUPTED, error=INTERRUPTED_ERROR)
)
ANY_EARLIER = select(RECORDS.c.id).where(RECORDS.c.chat_id == bindparam("b_chat_id")).limit(1)
INSERT_RECORD = insert(RECORDS).returning(RECORDS.c.id)
FIRST_QUESTION_AS_ABSTRACT = (
    update(CHATS)
    .where(CHATS.c.id == bindparam("b_chat_id"), CHATS.c.abstract == "")
    .values(abstract=bindparam("b_abstract"))
)
# The outcome, only while the record is still running; the columns come as parameters.
FINISH_RUNNING = update(RECORDS).where(
    RECORDS.c.id == bindparam("b_record_id"), RECORDS.c.status == RecordStatus.RUNNING
)
# An answer that could not be saved when it ended, closed later by the living process that holds
# it: while the record still runs, or over a sweep's "the process answering it stopped", which
# only guessed from the lease that lapsed during the outage.
CLOSE_UNSAVED = update(RECORDS).where(
    RECORDS.c.id == bindparam("b_record_id"),
    or_(
        RECORDS.c.status == RecordStatus.RUNNING,
        and_(RECORDS.c.status == RecordStatus.INTERRUPTED, RECORDS.c.error == INTERRUPTED_ERROR),
    ),
)
