"""Every sentence the code refuses with has its Chinese in the catalogue, with the same holes,
and that Chinese is Chinese: the test reads the code's refusals (a domain error, a gateway
``ApiError`` or ``OpenAIError``, a gateway body check's ``ValueError``, raised with a literal,
an f-string or a module constant) and the words a service stores for a person to read later (a
document's failure, a page sync's message), so a new sentence without its Chinese fails here
rather than reaching a Chinese reader half English."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import cast

import pytest

from gateway.errors import ROUTING_WORDS
from gateway.sse_wire import failed_answer
from kbcore.db.lease import INTERRUPTED_ERROR
from kbcore.models.failures import SENTENCES
from kbcore.words.placeholders import Pattern, keyed
from kbcore.words.refusal_words import CHINESE, LATIN_WORDS_ALLOWED
from kbcore.words.translate import refusal_in
from services.retrieval.ingestion.jobs.queue import INGESTION_FAILED

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("kbcore", "services", "gateway", "cli")
REFUSING = frozenset(
    {
        "InvalidRequest",
        "TooLong",
        "NotFound",
        "Unauthenticated",
        "PermissionDenied",
        "RateLimited",
        "Busy",
        "Conflict",
        "CorruptData",
        "StorageFull",
        "Unavailable",
        "ApiError",
        "OpenAIError",
    }
)
# Refusals whose words the code builds from parts at run time (or passes on, already shown): their
# parts are catalogued one by one, and what stays English is said beside them in the catalogue.
BUILT_AT_RUN_TIME = frozenset(
    {
        "services/retrieval/caller_check.py: refusal_text(self.principal, refused)",
        "services/retrieval/search/evaluation.py: '; '.join(problems[:PROBLEMS_SHOWN])",
        "services/retrieval/embedding/spaces.py: refusal",
        "services/retrieval/embedding/registered.py: shown(f'embedding model {row.name!r} did not answer an"
        " embeddings call: {exc}', api_key)",
        "services/chat/share_page.py: f'the logo must be a PNG, JPEG, GIF or WebP image, not {media_type}' + ("
        "' (an SVG can carry scripts)' if media_type.startswith('image/svg') else '')",
        "services/chat/application_rpcs.py: refusal",
        "services/chat/access/rules.py: refusal_text(principal, requirement)",
        "services/chat/answering/saving.py: reason",
        "services/chat/accounts/refusals.py: message",
        "gateway/errors.py: backend_words(error, refusal)",
        # A failure's words with the error id of its log line (kbcore.error_ids): the words are
        # catalogued, and so is the form with the id.
        "gateway/relay.py: with_error_id(STREAM_BROKE, error_id)",
        "gateway/edge/host_rules.py: words",
        "gateway/permission_check/route_check.py: refusal_text(principal, refused)",
        "gateway/openai/asking.py: message",
        "gateway/openai/wire.py: error.message",
        "gateway/openai/wire.py: words",
        # Stored words passed on: a refusal's (catalogued where it is raised) or a job's failure.
        "services/retrieval/ingestion/jobs/worker.py: str(exc)",
        "services/retrieval/ingestion/jobs/leased.py: error",
        "services/retrieval/ingestion/jobs/queue.py: failure",
        "services/retrieval/ingestion/web_sync.py: note",
        "services/retrieval/ingestion/jobs/reembed_worker.py: str(exc)",
    }
)
# Words stored or answered for a person to read later, which the gateway shows in the reader's
# language like a refusal: the keyword or position of a call that carries them, and the attribute
# an assignment stores them in.
STORED_KEYWORDS = {"Outcome": "error"}
STORED_POSITIONS = {"Synced": 2, "_give_up": 1}
STORED_ATTRIBUTES = frozenset({"error", "source_note"})
_HOLE = re.compile(r"\{[^{}]*\}")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/']*")


def _template(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [
            str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(cast(ast.FormattedValue, v).value) + "}"
            for v in node.values
        ]
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _files() -> list[Path]:
    return [path for top in PRODUCT for path in (ROOT / top).rglob("*.py") if "migrations" not in path.parts]


def _constants() -> dict[str, list[str]]:
    """Module-level string constants by name, across the product (a refusal's words are often one)."""
    found: dict[str, list[str]] = {}
    for path in _files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            if (text := _template(node.value)) is not None:
                found.setdefault(node.targets[0].id, []).append(text)
    return found


def _stored_words(node: ast.AST) -> list[ast.expr]:
    """The words ``node`` stores for a person to read later: an argument of a call named in
    ``STORED_KEYWORDS``/``STORED_POSITIONS``, or the value assigned to a ``STORED_ATTRIBUTES``
    attribute (in a tuple assignment, its own value)."""
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        found = [k.value for k in node.keywords if name in STORED_KEYWORDS and k.arg == STORED_KEYWORDS[name]]
        position = STORED_POSITIONS.get(str(name))
        return found + node.args[position : position + 1] if position is not None else found
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        pairs = (
            list(zip(target.elts, value.elts, strict=False))
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            else [(target, value)]
        )
        return [v for t, v in pairs if isinstance(t, ast.Attribute) and t.attr in STORED_ATTRIBUTES]
    return []


def _words_argument(call: ast.Call, name: str) -> ast.expr | None:
    arguments = call.args[1:2] if name in ("ApiError", "OpenAIError") else call.args[:1]
    if not arguments:
        return None
    return arguments[0]


def _refusals() -> tuple[dict[str, str], list[str]]:
    """(keyed template → where it is raised, the refusals whose words are built at run time)."""
    constants = _constants()
    templates: dict[str, str] = {}
    built: list[str] = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            said = _stored_words(node) if path.is_relative_to(ROOT / "services") else []
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                # A request body's own check in the gateway says its sentence as a ValueError.
                refuses = name in REFUSING or (name == "ValueError" and path.is_relative_to(ROOT / "gateway"))
                if refuses and (words := _words_argument(node, str(name))) is not None:
                    said.append(words)
            for words in said:
                _read(words, path.relative_to(ROOT), constants, templates, built)
    return templates, built


def _read(
    words: ast.expr, where: Path, constants: dict[str, list[str]], templates: dict[str, str], built: list[str]
) -> None:
    """Add what ``words`` can say to ``templates`` (keyed, with where it is said), or to
    ``built`` when it is made at run time; an empty literal (a stored note cleared) says nothing."""
    for branch in (words.body, words.orelse) if isinstance(words, ast.IfExp) else (words,):
        if isinstance(branch, ast.Call) and isinstance(branch.func, ast.Attribute) and branch.func.attr == "format":
            branch = branch.func.value  # CONSTANT.format(value): the constant is the template
        if (text := _template(branch)) is not None:
            if text:
                templates.setdefault(keyed(text), f"{where}:{branch.lineno}")
        elif isinstance(branch, ast.Name) and branch.id in constants:
            templates.update({keyed(text): f"{where}:{branch.lineno}" for text in constants[branch.id]})
        else:
            built.append(f"{where}: {ast.unparse(branch)}")


REFUSALS, BUILT = _refusals()


def test_every_refusal_in_the_code_has_its_chinese() -> None:
    missing = {template: where for template, where in REFUSALS.items() if template not in CHINESE}
    assert not missing, missing


@pytest.mark.parametrize(
    "sentence",
    [
        *ROUTING_WORDS.values(),
        *SENTENCES.values(),
        INTERRUPTED_ERROR,
        INGESTION_FAILED,
        keyed(failed_answer("{message}")),
    ],
)
def test_every_failure_a_page_shows_has_its_chinese(sentence: str) -> None:
    """A route nobody serves, a saved record's or document's failure, the last chunk of a failed
    answer: shown to readers though never raised as a refusal."""
    assert sentence in CHINESE


def test_only_the_known_refusals_are_built_at_run_time() -> None:
    # A new one is a refusal this test cannot read: give it a literal or constant template.
    assert set(BUILT) <= BUILT_AT_RUN_TIME, set(BUILT) - BUILT_AT_RUN_TIME


@pytest.mark.parametrize("english", sorted(CHINESE))
def test_the_chinese_has_the_same_holes_and_no_english_words(english: str) -> None:
    chinese = CHINESE[english]
    assert sorted(_HOLE.findall(chinese)) == sorted(_HOLE.findall(english))
    Pattern.of(english)  # compiles
    english_words = [
        word
        for word in _LATIN_WORD.findall(_HOLE.sub("", chinese))
        if not (word.isupper() or any(c in word for c in "_./0123456789") or word in LATIN_WORDS_ALLOWED)
    ]
    assert not english_words, (chinese, english_words)


def test_a_finished_sentence_reads_in_chinese_with_its_values() -> None:
    template = next(t for t in CHINESE if t.count("{") == 1 and "does not exist" in t)
    hole = _HOLE.findall(template)[0]
    sentence = template.replace(hole, "abc-123")
    shown = refusal_in("zh", sentence, 404)
    assert "abc-123" in shown and shown == CHINESE[template].replace(hole, "abc-123")
    assert refusal_in("en", sentence, 404) == sentence


def test_a_sentence_after_the_gateways_lead_reads_in_chinese_too() -> None:
    inner = next(t for t in CHINESE if "{" not in t and t.startswith("the "))
    lead = next(t for t in CHINESE if t.startswith("a backend service is unavailable: {"))
    shown = refusal_in("zh", lead.split("{")[0] + inner, 503)
    assert CHINESE[inner] in shown and "backend" not in shown


def test_a_sentence_the_catalogue_lacks_is_never_shown_half_translated() -> None:
    shown = refusal_in("zh", "a sentence nobody catalogued: frobnicated", 404)
    assert "frobnicated" not in shown and shown == CHINESE["what the request names does not exist"]
