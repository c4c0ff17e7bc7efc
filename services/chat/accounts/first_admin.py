"""The first administrator of a new deployment: user ``admin``, without a password, and a
one-time sign-in link to set one (``make run`` prints it; docs/access.md).

Two processes starting at once may both find no user. Only one of them can add ``admin``: on
SQLite writers run one at a time, so the second finds the first one's user; on PostgreSQL the
second insert waits on the unique username and then fails, and that process returns None.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import UserAccount
from kbcore.permissions.roles import Role
from kbcore.settings import Settings
from services.chat.accounts.account_audit import record_user
from services.chat.accounts.user_tokens import UserTokens

FIRST_ADMIN = "admin"
FIRST_START = "for the first administrator, on the deployment's first start"


async def ensure_first_admin(
    sessions: async_sessionmaker[AsyncSession], settings: Settings, how: str = FIRST_START
) -> str | None:
    """A one-time sign-in code for a new administrator ``admin`` when the deployment has no user
    yet; None when it has one (or another process is creating the first one right now). ``how``:
    the link's audit detail (who made it, where)."""
    tokens = UserTokens(sessions, settings)
    try:
        async with sessions.begin() as session:
            if await session.scalar(select(func.count()).select_from(UserAccount)):
                return None
            account = UserAccount(username=FIRST_ADMIN, password_hash="", role=Role.ADMIN.value)
            session.add(account)
            await session.flush()
            record_user(session, "create", account, "the first administrator, with a sign-in link")
            code, _ = await tokens.new_link(session, account, how)
    except IntegrityError:
        return None
    return code
