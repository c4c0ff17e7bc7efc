"""The deployment always keeps an active administrator: the last one cannot be deleted,
deactivated or demoted.

Two such requests at once (each removing a different one of the last two administrators) must
not both pass, so the check and the change share one transaction that first locks the rows of
every active administrator, always in the same order (by id). On PostgreSQL the second
transaction waits for the first, then re-reads the rows it waited for and no longer counts the
administrator the first one removed; on SQLite, writers run one at a time (``BEGIN IMMEDIATE``,
``kbcore.db.engine``), so the second one reads what the first one committed.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kbcore.db.tables import UserAccount
from kbcore.permissions.roles import Role
from services.chat.accounts.refusals import last_administrator


async def lock_active_administrators(session: AsyncSession) -> list[str]:
    """The ids of the active administrators, their rows locked until the transaction ends.
    Call it first in a transaction that may remove one, before touching any other user row."""
    rows = await session.scalars(
        select(UserAccount.id)
        .where(UserAccount.role == Role.ADMIN.value, UserAccount.is_active.is_(True))
        .order_by(UserAccount.id)
        .with_for_update()
    )
    return list(rows.all())


def keep_an_administrator(administrators: list[str], leaving: str) -> None:
    """Refuse (a conflict, 409) when ``leaving`` is the only active administrator left."""
    if administrators == [leaving]:
        raise last_administrator()
