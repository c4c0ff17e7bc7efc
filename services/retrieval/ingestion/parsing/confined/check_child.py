"""``python -m services.retrieval.ingestion.parsing.confined.check_child``: check one uploaded file in the
spool inside limits of its own (``upload_check``), as the parser runs (``child``).

The parent (``check_sandbox``) passes one argument, ``{"filename", "path", "members", "limits"}``
(``members``: the folder an archive's files are written to, "" to leave an archive whole), and
reads one JSON object from stdout: ``{"files": [CheckedFile, …]}`` or ``{"rejected": words}``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from services.retrieval.ingestion.parsing.confined.child import answer_parent, confine
from services.retrieval.ingestion.parsing.document import ParseLimits
from services.retrieval.ingestion.parsing.upload_check import check_upload


def check_argument(filename: str, path: Path, members: Path | None, limits: ParseLimits) -> str:
    """The child's one argument (the parent writes it, the child reads it: one format, here)."""
    request = {
        "filename": filename,
        "path": str(path),
        "members": str(members) if members is not None else "",
        "limits": dataclasses.asdict(limits),
    }
    return json.dumps(request, ensure_ascii=False)


def main() -> None:
    request = json.loads(sys.argv[1])
    limits = ParseLimits(**request["limits"])
    confine(limits)
    filename = request["filename"]
    members = Path(request["members"]) if request["members"] else None

    def checked() -> dict[str, object]:
        return {"files": [file.as_json() for file in check_upload(filename, Path(request["path"]), limits, members)]}

    answer_parent(filename, checked)


if __name__ == "__main__":
    main()
