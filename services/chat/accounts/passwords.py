"""Usernames and passwords: checked in words before anything is stored, and passwords kept only
as argon2id hashes (argon2-cffi's ``PasswordHasher`` with its own defaults, so a later release
that raises them rehashes old passwords at their next sign-in).

A password's length is checked before it is hashed: argon2 reads every byte it is given, and a
megabyte-long "password" must cost the service nothing. Hashing and verifying take a tenth of a
second of CPU, so they run in a worker thread and never hold the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import unicodedata
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from kbcore.errors import InvalidRequest
from kbcore.words.said import said

MIN_PASSWORD = 8
MAX_PASSWORD = 256
MAX_USERNAME = 64

_HASHER = PasswordHasher()


def checked_username(raw: str) -> str:
    """The username as stored (stripped), or InvalidRequest with a sentence saying what is wrong."""
    name = raw.strip()
    if not name:
        raise InvalidRequest(said("username_must_not_be_empty_only"))
    if len(name) > MAX_USERNAME:
        raise InvalidRequest(
            said("username_must_be_most_characters_long", max_username=MAX_USERNAME, len_name=len(name))
        )
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in name):
        raise InvalidRequest(said("username_must_not_contain_control_characters"))
    return name


def checked_password(password: str, field: str = "the password") -> str:
    """``password`` when it is 8 to 256 characters long, else InvalidRequest; never hashed before this."""
    if len(password) > MAX_PASSWORD:
        raise InvalidRequest(
            said("must_be_most_characters_long_got", field=field, max_password=MAX_PASSWORD, len_password=len(password))
        )
    if len(password) < MIN_PASSWORD:
        raise InvalidRequest(said("must_be_least_characters_long", field=field, min_password=MIN_PASSWORD))
    return password


async def hash_password(password: str) -> str:
    """The argon2id hash of an already checked password."""
    return await asyncio.to_thread(_HASHER.hash, checked_password(password))


@dataclass(frozen=True)
class Verdict:
    matches: bool
    needs_rehash: bool = False  # the hash was made with weaker parameters than today's defaults


async def verify_password(stored_hash: str, password: str) -> Verdict:
    """Whether ``password`` matches ``stored_hash`` (argon2's own check). An account without a
    password (``""``), or a password too long to be anyone's, matches nothing, but costs a
    verification all the same, so the time taken does not tell which accounts exist."""
    usable = bool(stored_hash) and len(password) <= MAX_PASSWORD
    target = stored_hash if usable else _stand_in_hash()
    matches = await asyncio.to_thread(_verifies, target, password[:MAX_PASSWORD])
    if not (usable and matches):
        return Verdict(False)
    return Verdict(True, _HASHER.check_needs_rehash(stored_hash))


def _verifies(stored_hash: str, password: str) -> bool:
    try:
        return bool(_HASHER.verify(stored_hash, password))
    except (VerificationError, InvalidHashError):
        return False


@functools.cache
def _stand_in_hash() -> str:
    """A hash nobody's password is checked against for real: what an unknown user costs."""
    return _HASHER.hash("no account has this password: it only takes the time a real check takes")
