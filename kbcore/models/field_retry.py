"""Optional request fields an endpoint refused, remembered so each is refused at most once.

A provider profile can be wrong for one server (a proxy in front of OpenAI, an old vLLM, a
generic gateway): the server answers 400 naming a field we added. Without this, every
auxiliary call would fail the same way and the product would silently answer without an
assessment. Only fields the client adds on its own account are ever dropped; the model, the
messages and the token limit never are.

Error wordings recognised (the field's name is looked for in the error's message and param):
OpenAI's legacy ``Unrecognized request argument supplied: thinking`` (param null), its newer
``Unknown parameter: 'thinking'.`` (param "thinking", code "unknown_parameter"), and
pydantic-style servers' ``Extra inputs are not permitted`` whose ``loc`` names the field.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import openai

from kbcore.models.scrub import shown

log = logging.getLogger(__name__)

_REFUSAL_STATUSES = frozenset({400, 422})


class RefusedFields:
    """Per client instance (one endpoint): which optional fields to leave out from now on.

    Shared by every call of the client, from any task or thread; the set only grows."""

    def __init__(self, endpoint: str) -> None:
        self._endpoint = endpoint
        self._refused: set[str] = set()
        self._lock = threading.Lock()

    @property
    def refused(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._refused)

    def strip(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``body`` without the fields this endpoint has refused before."""
        refused = self.refused
        return {key: value for key, value in body.items() if key not in refused}

    def learn(self, exc: openai.APIStatusError, sent: Iterable[str]) -> frozenset[str]:
        """The optional fields among ``sent`` that ``exc`` says the endpoint does not accept,
        remembered (and logged the first time); empty when the error is about something else."""
        if exc.status_code not in _REFUSAL_STATUSES:
            return frozenset()
        named = frozenset(name for name in sent if _names(exc, name))
        with self._lock:
            new = named - self._refused
            self._refused |= named
        if new:
            log.warning(
                "the model endpoint %s refused %s; sending without it from now on (%s)",
                self._endpoint,
                ", ".join(sorted(new)),
                shown(_detail(exc), None)[:200],  # the endpoint's words, which may echo a key
            )
        return named


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict | list):
        return json.dumps(body, ensure_ascii=False)
    return str(body) if body is not None else exc.message


def _names(exc: openai.APIStatusError, name: str) -> bool:
    """Does the error name the field ``name`` (as a whole word, not inside another name)?"""
    body = exc.body
    if isinstance(body, dict) and body.get("param") == name:
        return True
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"
    return re.search(pattern, _detail(exc)) is not None
