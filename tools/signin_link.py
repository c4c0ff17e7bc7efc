"""``python -m tools.signin_link [USERNAME]``: a new one-time sign-in link to the operator page
for a user of this deployment (default ``admin``), when the one ``make run`` printed on its first
start is used up or expired, or a password is forgotten (docs/access.md, People and roles). On a
deployment with no user yet (one not started by ``make run``, e.g. compose:
``docker compose exec chat python -m tools.signin_link``) it creates ``admin`` first, as
``make run`` does.

It writes to the database directly, as the launcher does, so it needs no credentials but the
deployment's own settings (``KB_DATA_DIR`` / ``KB_DATABASE_URL``); whoever can run it there can
read the database anyway. The link is on the audit trail like one an administrator makes
(``user.create_sign_in_link``), as the act of ``service`` named after this tool, with the
operating-system user and host it ran as: a link is a way in as that person.

The link points at ``KB_PUBLIC_URL`` when it is set (the address people open: behind a proxy, on
a published port, or where the gateway's settings are not this process's, as in another
container), else at ``KB_HTTP_HOST``/``KB_HTTP_PORT`` (``kbcore.addresses.gateway_address``).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import socket
import sys

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.addresses.gateway_address import public_url
from kbcore.db.audit import Actor, acting
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.tables import UserAccount
from kbcore.settings import Settings, SettingsError
from services.chat.accounts.first_admin import FIRST_ADMIN, ensure_first_admin
from services.chat.accounts.user_tokens import UserTokens

TOOL = "tools.signin_link"


class NoSuchUser(LookupError):
    """The user named has no account, or it is switched off: a link would not sign them in."""


def who_runs_it() -> str:
    """The operating-system user and host running the tool, for the audit row's detail."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's arbitrary user)
        user = "?"
    return f"{user}@{socket.gethostname()}"


def how_made() -> str:
    """The audit detail of a link this tool makes."""
    return f"on the command line ({TOOL}), run as {who_runs_it()}"


def tool_actor() -> Actor:
    """Who the audit trail says made the link: the deployment's own tooling, by name."""
    return Actor("service", "", TOOL)


def signin_url(url: str, code: str) -> str:
    """The operator page's address that redeems the one-time ``code`` (the fragment never
    reaches a server's log)."""
    return f"{url}/ui/admin#signin={code}"


async def new_signin_code(
    sessions: async_sessionmaker[AsyncSession], settings: Settings, username: str = FIRST_ADMIN
) -> str:
    """A fresh one-time sign-in code for ``username``; NoSuchUser when there is no such active user."""
    async with sessions.begin() as session:
        account = await session.scalar(select(UserAccount).where(UserAccount.username == username))
        if account is None or not account.is_active:
            state = "no user" if account is None else "a deactivated user"
            raise NoSuchUser(f"{username!r} is {state} of this deployment")
        with acting(tool_actor()):
            code, _ = await UserTokens(sessions, settings).new_link(session, account, how_made())
    return code


async def run(username: str) -> int:
    settings = Settings.from_env()
    address = public_url(settings)  # an unreadable KB_PUBLIC_URL stops the tool before it makes a link
    engine = create_engine(settings.resolved_database_url())
    sessions = session_factory(engine)
    try:
        with acting(tool_actor()):
            first = await ensure_first_admin(sessions, settings, how_made()) if username == FIRST_ADMIN else None
        code = first or await new_signin_code(sessions, settings, username)
    except NoSuchUser as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    finally:
        await engine.dispose()
    minutes = f"{settings.signin_link_minutes:g}"
    sys.stdout.write(
        f"Sign in as {username} (once, within {minutes} minutes) · 以 {username} 登录（仅一次，{minutes} 分钟内有效）:\n"
        f"  {signin_url(address, code)}\n"
    )
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("username", nargs="?", default=FIRST_ADMIN, help=f"whose link (default {FIRST_ADMIN})")
    args = parser.parse_args()
    try:
        sys.exit(asyncio.run(run(args.username)))
    except SettingsError as exc:
        parser.exit(2, f"error: {exc}\n")


if __name__ == "__main__":
    main()
