"""How a process's log lines look (``KB_LOG_FORMAT``): readable text by default, or one JSON
object a line for a log collector. Either way a line emitted while a question is handled
carries its trace id and record id (``kbcore.telemetry.log_context``), so a question's lines can be
found from its record's details, and its trace from any of its lines.

The standard library's ``logging`` with a small formatter: a JSON line is a dict and
``json.dumps``, not worth a dependency.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from kbcore.settings import SettingsError
from kbcore.telemetry.log_context import current_ids

LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class QuestionIds(logging.Filter):
    """Adds ``trace_id`` and ``record_id`` to every record ("" when not known)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.trace_id, record.record_id = current_ids()
        return True


class TextFormatter(logging.Formatter):
    """The readable line, with ``[trace=… record=…]`` appended when a question is known."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        ids = [
            f"{label}={value}"
            for label, value in (
                ("trace", getattr(record, "trace_id", "")),
                ("record", getattr(record, "record_id", "")),
            )
            if value
        ]
        if not ids:
            return line
        first, newline, rest = line.partition("\n")  # after the message, before a traceback
        return f"{first} [{' '.join(ids)}]{newline}{rest}"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, service, logger, message, the
    question's ids when known, and the traceback as one string when there is one."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self._service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "service": self._service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("trace_id", "record_id"):
            value = getattr(record, key, "")
            if value:
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False)


# Loggers that write SQL statements with their parameters (aiosqlite at DEBUG, SQLAlchemy's
# engine at INFO): stored hashes of tokens and passwords, share-link tokens. Kept at WARNING
# whatever KB_LOG_LEVEL asks, so no log line carries them.
QUIET_LOGGERS = ("aiosqlite", "sqlalchemy.engine")


def configure_logging(service: str, level: str, log_format: str) -> None:
    """The root logger's one handler (stderr) in ``log_format``; every logger, uvicorn's too
    when it is told not to configure its own, writes through it."""
    chosen = log_format.strip().lower()
    if chosen not in LOG_FORMATS:
        raise SettingsError(f"KB_LOG_FORMAT={log_format!r} is not one of {', '.join(LOG_FORMATS)}")
    handler = logging.StreamHandler()
    handler.addFilter(QuestionIds())
    handler.setFormatter(JsonFormatter(service) if chosen == "json" else TextFormatter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    for name in QUIET_LOGGERS:  # whatever the level asked for
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
