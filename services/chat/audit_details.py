"""How the chat service words the ``detail`` of its audit rows (``kbcore.db.audit`` writes
them): which fields a change touched, by name only, so no secret or text reaches the trail
(docs/access.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NO_CHANGE = "no change"


def changed_fields(before: Mapping[str, Any], after: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The names in ``after`` whose values differ from ``before``'s, in ``after``'s order; a
    setting that is itself a mapping (``model_setting``) names its keys (``model_setting.prompt``)."""
    names: list[str] = []
    for name, value in after.items():
        old = before.get(name)
        if old == value:
            continue
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            inner = {key: value.get(key) for key in (*value, *(k for k in old if k not in value))}
            names.extend(changed_fields(old, inner, f"{prefix}{name}."))
        else:
            names.append(prefix + name)
    return names


def detail_of(words: Iterable[str], nothing: str = NO_CHANGE) -> str:
    """The words joined for a row's ``detail``; ``nothing`` when a change asked touched nothing."""
    kept = [word for word in words if word]
    return ", ".join(kept) if kept else nothing
