"""The audit rows of user accounts (``kbcore.db.audit`` writes them into the transaction of the
change): users created, changed, deleted, sent a sign-in link; passwords changed; personal
tokens; sign-ins, and failed ones. Never a password, token or sign-in code: a password reset is
said as "password reset", a token is named by its name or shown prefix.

A successful sign-in is recorded as the act of the user who signed in (nobody was signed in when
the call began); a failed one as the anonymous caller's, from their address, with the username
they tried, in a small transaction of its own, since a refusal has no change to join.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.audit import Actor, acting, current_actor, record_action
from kbcore.db.tables import UserAccount, UserToken

USER = "user"
PERSONAL_TOKEN = "personal_token"


def record_user(session: AsyncSession, verb: str, account: UserAccount, detail: str = "") -> None:
    """``user.<verb>`` on ``account`` (flushed: it has its id)."""
    record_action(session, f"{USER}.{verb}", USER, account.id, account.username, detail)


def record_personal_token(session: AsyncSession, verb: str, row: UserToken) -> None:
    """``personal_token.<verb>`` on ``row`` (flushed), named by its name, else its shown prefix."""
    record_action(session, f"{PERSONAL_TOKEN}.{verb}", PERSONAL_TOKEN, row.id, row.name or row.prefix, row.prefix)


@contextlib.contextmanager
def from_address(address: str) -> Iterator[None]:
    """Inside, the actor has ``address`` when the call's metadata named none (a sign-in request
    carries the client's address in its own field too)."""
    actor = current_actor()
    with acting(actor if actor.address else dataclasses.replace(actor, address=address.strip()[:64])):
        yield


def record_sign_in(session: AsyncSession, account: UserAccount, method: str) -> None:
    """``user.sign_in``, as the act of the user who signed in (``method``: password or link)."""
    with acting(Actor(USER, account.id, account.username, current_actor().address)):
        record_user(session, "sign_in", account, method)


async def record_failed_sign_in(
    sessions: async_sessionmaker[AsyncSession], tried: str, user_id: str, detail: str
) -> None:
    """``user.sign_in_failed`` with the username ``tried`` ("" for a sign-in link), committed on its own."""
    async with sessions.begin() as session:
        record_action(session, f"{USER}.sign_in_failed", USER, user_id, tried, detail)
