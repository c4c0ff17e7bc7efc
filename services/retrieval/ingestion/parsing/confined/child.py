"""``python -m services.retrieval.ingestion.parsing.confined.child``: parse one file inside limits of its own.

The parent (``sandbox``) starts one such process per file, passes the file name and the limits
as the one argument (with the split rules) and the file's bytes on stdin, and reads one JSON
object from stdout: ``{"title", "paragraphs": [[title, content], …], "unused_separators"}``, or
``{"rejected": words}`` (``kbcore.words.said``, as JSON). The limits on
this process are set before the file is read, so a parser that runs away (a Rust allocation
that aborts, a stream that inflates to gigabytes, a page tree that never ends) ends this process
and nothing else; it runs at a lower priority so questions answered meanwhile keep the CPU.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
import traceback
from collections.abc import Callable
from typing import Any

from kbcore.words.said import Said, said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits
from services.retrieval.ingestion.parsing.parse import parse_document
from services.retrieval.ingestion.split_rules import SplitRules

NICENESS = 10
MEMORY_REFUSED = "needs_more_memory_parsing_one_file"  # "{filename} needs more memory than …"
# The exit status of a parser that raised what no parser should: the file is the likely cause.
# Any other failure (an import, a bad argument) is the service's own fault, not the file's.
PARSER_FAILED = 3


def request_argument(filename: str, limits: ParseLimits, rules: SplitRules) -> str:
    """The child's one argument (the parent writes it, the child reads it: one format, here)."""
    return json.dumps(
        {"filename": filename, "limits": dataclasses.asdict(limits), "rules": rules.to_json()}, ensure_ascii=False
    )


def confine(limits: ParseLimits) -> None:
    """This process's own limits: address space, CPU seconds (SIGXCPU at the soft limit, SIGKILL a
    little later), no core file, and a lower priority."""
    memory = limits.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.nice(NICENESS)


def answer_parent(filename: str, work: Callable[[], dict[str, Any]]) -> None:
    """Write what ``work`` gives to stdout as one JSON object, a refusal for a file the limits or
    its own content refuse; anything else it raises exits with ``PARSER_FAILED`` and its stack on
    stderr (the parent logs it; the uploader reads a sentence). One ending for every confined child."""
    try:
        try:
            result = work()
        except DocumentRejected as exc:
            result = {"rejected": _words_of(exc).as_json()}
        except MemoryError:
            result = {"rejected": said(MEMORY_REFUSED, filename=f"{filename!r}").as_json()}
    except Exception:
        traceback.print_exc()
        sys.exit(PARSER_FAILED)
    sys.stdout.write(json.dumps(result, ensure_ascii=False))
    sys.stdout.flush()


def _words_of(rejected: DocumentRejected) -> Said:
    """The words a refusal raised in this process was raised with, to send to the parent."""
    return rejected.words or said("request_invalid")


def _result(filename: str, data: bytes, limits: ParseLimits, rules: SplitRules) -> dict[str, Any]:
    parsed = parse_document(filename, data, limits, rules)
    return {
        "title": parsed.title,
        "paragraphs": [[p.title, p.content, list(p.questions)] for p in parsed.paragraphs],
        "unused_separators": list(parsed.unused_separators),
    }


def main() -> None:
    request = json.loads(sys.argv[1])
    limits = ParseLimits(**request["limits"])
    confine(limits)
    data = sys.stdin.buffer.read()
    filename = request["filename"]
    answer_parent(filename, lambda: _result(filename, data, limits, SplitRules.from_json(request["rules"])))


if __name__ == "__main__":
    main()
