"""A legacy completion prompt that is a chat written out as text: frameworks that run a chat on
a completion-only model (LlamaIndex's ``messages_to_prompt``, used by its completion-mode
``chat()``) send the turns one per ``role: text`` line and end with ``assistant: `` for the
model to go on. Read whole, that is a question in several parts, half of them old; read as
turns, it is the last user turn asked with the earlier ones as history, as a chat completion.

Only a prompt shaped so from its first line to its last (a role first, ``assistant:`` last with
nothing after it) is read as turns: a question that merely mentions ``user:`` stays a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TURN = re.compile(r"^(system|developer|user|assistant): ?", re.MULTILINE)
_ENDS_FOR_THE_ASSISTANT = re.compile(r"(?:^|\n)assistant:\s*$")


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


def prompt_turns(prompt: str) -> list[Turn] | None:
    """The prompt's turns, the closing ``assistant:`` left out; None when it is not written as
    turns or has no user turn to answer last."""
    if not _TURN.match(prompt) or not _ENDS_FOR_THE_ASSISTANT.search(prompt):
        return None
    starts = list(_TURN.finditer(prompt))
    turns = [
        Turn(found.group(1), prompt[found.end() : ends.start() if ends else len(prompt)].strip())
        for found, ends in zip(starts, [*starts[1:], None], strict=True)
    ][:-1]
    if not turns or turns[-1].role != "user":
        return None
    return turns
