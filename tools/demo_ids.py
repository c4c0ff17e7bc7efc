"""The demo data's ids for ``make run``: random on first start, then read back from the data folder.

Fixed (uuid5) ids let a page on another site aim a forged request at the demo dataset without
learning anything first, so the launcher draws random ones, once per data folder,
and a restart reuses them: seeding stays idempotent and the banner's application id stays valid.
Tests and the bench pass the fixed ids of ``tools.seed_demo`` explicitly instead.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

DEMO_IDS_FILE = "demo_ids.json"


@dataclass(frozen=True)
class DemoIds:
    dataset_id: str
    application_id: str


def _read(path: Path) -> DemoIds | None:
    try:
        stored = json.loads(path.read_text())
        return DemoIds(str(uuid.UUID(stored["dataset_id"])), str(uuid.UUID(stored["application_id"])))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"{path} is not a demo id file; delete it to draw new ids") from exc


def persisted_demo_ids(data_dir: Path) -> DemoIds:
    """The ids stored in ``data_dir``, drawn at random and stored (mode 0600) when there are none."""
    path = data_dir / DEMO_IDS_FILE
    stored = _read(path)
    if stored is not None:
        return stored
    ids = DemoIds(str(uuid.uuid4()), str(uuid.uuid4()))
    data_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        json.dump({"dataset_id": ids.dataset_id, "application_id": ids.application_id}, out)
    os.replace(partial, path)
    return ids
