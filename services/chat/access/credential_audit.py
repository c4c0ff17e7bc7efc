"""The audit rows of an application's API keys and share link (``kbcore.db.audit`` writes
them into the transaction of the change). A key is named by its prefix, never the key; a share
link by its application (one link per application, which is also its id in the trail), never by
the link's token, which lets anyone who holds it in. What changed is said in words, not values."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kbcore.db.audit import record_action
from kbcore.db.tables import AccessToken, ApiKey, Application
from services.chat.audit_details import changed_fields, detail_of

API_KEY = "api_key"
ACCESS_TOKEN = "access_token"
LINK_REPLACED = "link token replaced"


def state_of(row: ApiKey | AccessToken) -> dict[str, Any]:
    """What an operator's change may touch, to compare before and after."""
    state: dict[str, Any] = {"is_active": row.is_active, "expires_at": row.expires_at}
    if isinstance(row, AccessToken):
        state.update(access_num=row.access_num, daily_cap=row.daily_cap, access_token=row.access_token)
    return state


def change_words(before: dict[str, Any], row: ApiKey | AccessToken) -> list[str]:
    """The change from ``before`` to the row as it is now, in words: "revoked", "expires_at" …"""
    after = state_of(row)
    words = []
    for name in changed_fields(before, after):
        if name == "is_active":
            words.append("reactivated" if after["is_active"] else "revoked")
        elif name == "access_token":
            words.append(LINK_REPLACED)
        else:
            words.append(name)
    return words


def record_key(session: AsyncSession, verb: str, row: ApiKey, words: list[str] | None = None) -> None:
    """``api_key.<verb>`` for ``row`` (flushed: it has its id)."""
    detail = detail_of([f"application {row.application_id}", *(words or [])])
    record_action(session, f"{API_KEY}.{verb}", API_KEY, row.id, row.prefix, detail)


async def record_link(session: AsyncSession, verb: str, row: AccessToken, words: list[str] | None = None) -> None:
    """``access_token.<verb>`` for the share link of ``row``'s application, named by it."""
    name = await session.scalar(select(Application.name).where(Application.id == row.application_id))
    detail = detail_of(words) if words is not None else ""
    record_action(session, f"{ACCESS_TOKEN}.{verb}", ACCESS_TOKEN, row.application_id, name or "", detail)
