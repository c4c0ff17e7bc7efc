"""How the MaxKB chat route writes an answer's progress: as named ``agent_status`` events, as
ordinary chunks carrying the stage's line in ``reasoning_content``, or not at all.

Clients differ in what they read: our page and CLI read SSE event names; MaxKB's own chat page
and most line-oriented API clients read only ``data:`` lines and would take an
``agent_status`` payload for an answer chunk. ``reasoning`` is the default because it is the one
form every client reads correctly: the ones that know reasoning show the rounds as thinking, the
others skip an empty ``content``. A request names the form it wants; an application can change
its default (``PageSetting.progress``).
"""

from __future__ import annotations

from typing import Literal

from grpc_stubs.chat.v1 import chat_service_pb2 as pb

ProgressForm = Literal["named", "reasoning", "off"]
DEFAULT_FORM: ProgressForm = "reasoning"
_FORMS: dict[pb.ProgressMode, ProgressForm] = {
    pb.PROGRESS_MODE_NAMED: "named",
    pb.PROGRESS_MODE_REASONING: "reasoning",
    pb.PROGRESS_MODE_OFF: "off",
}


def progress_form(mode: pb.ProgressMode) -> ProgressForm:
    """The form of an application's ``ProgressMode`` (unspecified: the default)."""
    return _FORMS.get(mode, DEFAULT_FORM)


def progress_mode(form: ProgressForm | None) -> pb.ProgressMode:
    """The ``ProgressMode`` of a form (None: unspecified, the default)."""
    return next((mode for mode, name in _FORMS.items() if name == form), pb.PROGRESS_MODE_UNSPECIFIED)
