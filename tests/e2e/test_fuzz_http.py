"""The HTTP API fuzzed from its own ``/openapi.json`` with schemathesis (docs/decisions/fuzzing.md:
why schemathesis), as the operator (its token), with an application API key, as a share-link visitor
and as a signed-in person (their own account's routes).

Every operation in the schema is fuzzed; none is skipped. Three of them read their body
themselves (a document upload takes JSON or multipart, the two OpenAI routes parse OpenAI's
shape), so the schema has no body for them: the test describes their bodies from the same
pydantic models the routes use before fuzzing, rather than fuzzing them bodiless. Cases come
from three sources per operation: valid by the schema, invalid by the schema (negative mode),
and valid with the path's ids replaced by ids that exist, so the code behind the 404s runs too;
the routes whose valid bodies a generator rarely hits (a question a route accepts, an evaluation
case, a share link's token) also get one known-good body each, aimed at those ids. The aimed
cases (real ids, known bodies) are a few of their own per operation, sent before its random
ones, so that every operation gets past validation to real work whatever the random draw.

The run is bounded by a fixed number of examples per operation and a deterministic seed (about
half a second per operation on a quiet machine; how long it took is printed, not asserted);
``make fuzz`` runs it alone with ``KB_FUZZ_DEPTH`` times as many (four), to search deeper
than every run of the suite can afford
and asserts three things of every response: no 5xx (neither as the status nor as an error a
stream carries after its 200); no internal text in the body (a traceback, SQL, a driver's
name, a path of the checkout, an exception class name) unless the request itself carried that
text; and that it is what the schema says (schemathesis's conformance checks: a documented
status, a documented content type, a JSON body of the documented shape, the shapes forbidding
keys they do not name). The gateway's own log is watched too: an exception that escaped to the ASGI server is a
finding even when the client saw only a cut stream. It runs on a stack of its own: deleting what it finds must
not take the demo application from the rest of the session.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import logging
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import requests
import schemathesis
import urllib3
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

from gateway.openai.wire import CompletionIn
from gateway.routes.datasets import DocumentIn
from tests.e2e.private_stack import Seeded, private_stack

pytestmark = [pytest.mark.fuzz, pytest.mark.own_database]  # a SQLite stack of its own

REPO = Path(__file__).resolve().parents[2]
# Cases per operation: the operator reaches every route, the other callers mostly their refusals.
DEPTH = int(os.environ.get("KB_FUZZ_DEPTH", "1"))
OPERATOR_EXAMPLES = 16 * DEPTH
KEY_EXAMPLES = 6 * DEPTH
AIMED_EXAMPLES = 3  # per operation with ids that exist or a known-good body, before the random ones
LEAK = re.compile(
    r"Traceback|File \"|sqlalchemy|psycopg|sqlite3|aiosqlite|asyncpg|\bSELECT\b[^\n]*\bFROM\b|INSERT INTO|"
    r"UPDATE \w+ SET|DELETE FROM|" + re.escape(str(REPO)) + r"|\.py\b|\b[A-Z][A-Za-z]*(?:Error|Exception)\b"
)
CONFORMANCE = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# A 5xx that a stream carries after its 200: MaxKB's event:error, or OpenAI's error chunk.
STREAMED_5XX = re.compile(r'event:error\ndata:\{"code":\s*5\d\d|"type":\s*"server_error"')
# Bodies the routes read themselves, described from the models they validate with.
READ_BY_THE_ROUTE: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/dataset/{dataset_id}/document"): {
        "application/json": DocumentIn,
        "multipart/form-data": {
            "type": "object",
            "required": ["file"],
            "properties": {"file": {"type": "string", "format": "binary"}, "name": {"type": "string"}},
        },
    },
    ("POST", "/api/dataset/document/split"): {
        "multipart/form-data": {
            "type": "object",
            "required": ["file"],
            "properties": {
                "file": {"type": "string", "format": "binary"},
                "limit": {"type": "string"},
                "patterns": {"type": "string"},
                "overlap": {"type": "string"},
                "keep_tables": {"type": "string"},
            },
        },
    },
    ("POST", "/api/application/{app_id}/chat/completions"): {"application/json": CompletionIn},
    ("POST", "/v1/chat/completions"): {"application/json": CompletionIn},
}


# Operations a schema-driven case cannot bring to a 2xx: a web import and a web sync need a
# page that answers, a cancel a job that is running, a split preview a file of a supported type.
SCHEMA_CANNOT_REACH = frozenset(
    {
        "POST /api/dataset/{dataset_id}/document/web",
        "PUT /api/dataset/{dataset_id}/document/{document_id}/sync",
        "PUT /api/dataset/{dataset_id}/document/{document_id}/cancel_task",
        "POST /api/dataset/document/split",
    }
)
QUESTION = "重症医学科每天的探视时间是几点？"
PERSON, VICTIM, PASSWORD = "fuzz-person", "fuzz-victim", "fuzz-password-1"
# A model endpoint nobody listens to (port 9, discard): registering, checking and deleting it work.
MODEL: dict[str, Any] = {
    "name": "fuzz-model",
    "provider": "generic",
    "model_name": "fake-chat",
    "purpose": "chat",
    "credential": {"api_base": "http://127.0.0.1:9/v1", "api_key": "fuzz-key"},
}


@dataclass
class People:
    """The accounts the run needs: ``person`` (an administrator, signed in) fuzzes their own
    account's routes; ``victim`` is the user the administration routes are aimed at."""

    session: str
    token_id: str  # a personal token of the person's
    victim_id: str
    victim_code: str  # a one-time sign-in link of the victim's


def known_bodies(app_id: str, access_token: str, people: People) -> dict[tuple[str, str], dict[str, Any]]:
    """One body per route that a random one would almost never get past validation."""
    completion = {"model": app_id, "messages": [{"role": "user", "content": QUESTION}]}
    return {
        ("POST", "/api/user/login"): {"username": PERSON, "password": PASSWORD},
        ("POST", "/api/user/signin_link"): {"code": people.victim_code},
        ("PUT", "/api/user/re_password"): {"current_password": PASSWORD, "password": PASSWORD, "re_password": PASSWORD},
        ("POST", "/api/user/token"): {"name": "fuzz-token"},
        ("POST", "/api/user_manage"): {"username": "fuzz-created", "password": PASSWORD, "role": "viewer"},
        ("PUT", "/api/user_manage/{user_id}"): {"role": "editor"},
        ("PUT", "/api/user_manage/{user_id}/re_password"): {"password": PASSWORD, "re_password": PASSWORD},
        ("POST", "/api/application/{app_id}/chat/completions"): completion,
        ("POST", "/v1/chat/completions"): {**completion, "stream": True},
        ("POST", "/api/application/{app_id}/completions"): {"model": app_id, "prompt": QUESTION},
        ("POST", "/v1/completions"): {"model": app_id, "prompt": QUESTION},
        ("POST", "/api/application/{app_id}/eval"): {
            "cases": [{"turns": [{"question": QUESTION, "gold": [{"must_contain": "16:00"}]}]}]
        },
        ("POST", "/api/application/authentication"): {"access_token": access_token},
        ("PUT", "/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}/vote"): {"vote_status": "0"},
        ("PUT", "/api/application/{app_id}/api_key/{api_key_id}"): {"expires_at": ""},
        ("PUT", "/api/application/{app_id}/access_token"): {"access_num": 500},
        ("POST", "/api/model"): {**MODEL, "name": "fuzz-created"},
        ("PUT", "/api/model/{model_id}"): {"name": "fuzz-renamed"},
        ("PUT", "/api/application/{app_id}/chat/client/{chat_id}"): {"abstract": "改个名字"},
        (
            "PUT",
            "/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}/dataset/{dataset_id}/document_id/{document_id}/improve",
        ): {"content": "探视时间为每天15:00至16:00。"},
    }


class EscapedErrors(logging.Handler):
    """Collects what uvicorn logs at ERROR: an exception no route turned into a response."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(
            f"{record.getMessage()}: {record.exc_info[1]!r}" if record.exc_info else record.getMessage()
        )


@dataclass
class Tally:
    """What the run did and found, across both callers."""

    requests: int = 0
    unsendable: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)  # operations that answered 2xx at least once
    fuzzed: set[str] = field(default_factory=set)


def with_route_bodies(spec: dict[str, Any]) -> dict[str, Any]:
    """The schema with a request body for each operation that reads its own."""
    components = spec.setdefault("components", {}).setdefault("schemas", {})
    for (method, path), media in READ_BY_THE_ROUTE.items():
        content = {}
        for media_type, model in media.items():
            if isinstance(model, dict):
                content[media_type] = {"schema": model}
                continue
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(schema.pop("$defs", {}))
            content[media_type] = {"schema": schema}
        spec["paths"][path][method.lower()]["requestBody"] = {"required": True, "content": content}
    return spec


def leaked(case: Any, body: str) -> str | None:
    """Internal text in ``body`` that the request did not carry itself (an echo is no leak)."""
    sent = repr((case.path_parameters, case.query, case.body, case.headers))
    for match in LEAK.finditer(body):
        if match.group(0) not in sent:
            return match.group(0)
    return None


def check(case: Any, response: requests.Response, tally: Tally, caller: str) -> None:
    tally.requests += 1
    tally.statuses[response.status_code] = tally.statuses.get(response.status_code, 0) + 1
    if response.status_code < 300:
        tally.answered.add(f"{case.method} {case.path}")
    where = f"{caller} {case.method} {case.formatted_path} query={case.query} body={str(case.body)[:200]!r}"
    text = response.content.decode("utf-8", "replace")  # an XLSX export is bytes, not text
    if response.status_code >= 500 or STREAMED_5XX.search(text):
        tally.findings.append(f"{response.status_code} for {where}: {text[-300:]}")
    found = leaked(case, text)
    if found:
        tally.findings.append(f"leak {found!r} for {where}: {text[:300]}")
    tally.findings.extend(f"{problem} for {where}: {text[:300]}" for problem in nonconformance(case, response))


def nonconformance(case: Any, response: requests.Response) -> list[str]:
    """What schemathesis's conformance checks find wrong with ``response``, one line each."""
    try:
        case.validate_response(response, checks=CONFORMANCE)
    except AssertionError as failure:  # one check failed
        return [_failure_line(failure)]
    except BaseExceptionGroup as failures:  # several did
        return [_failure_line(failure) for failure in failures.exceptions]
    return []


def _failure_line(failure: BaseException) -> str:
    title = getattr(failure, "title", type(failure).__name__)
    message = getattr(failure, "message", str(failure))
    return f"{title}: {' '.join(str(message).split())[:300]}"


def operator_headers(seeded: Seeded) -> dict[str, str]:
    return {"Authorization": f"Bearer {seeded.stack.operator_token}"}


def real_ids(seeded: Seeded, headers: dict[str, str]) -> dict[str, str]:
    """Ids that exist, for the path: a chat of the caller's with one answered record, and (read
    by the operator) a paragraph of the seeded document, a key and a model endpoint."""
    url, operator = seeded.stack.url, operator_headers(seeded)
    chat_id = str(
        requests.get(f"{url}/api/application/{seeded.app_id}/chat/open", headers=headers, timeout=30).json()["data"]
    )
    asked = requests.post(
        f"{url}/api/application/chat_message/{chat_id}", json={"message": QUESTION}, headers=headers, timeout=60
    )
    assert asked.status_code == 200, asked.text
    ids = {
        "dataset_id": seeded.dataset_id,
        "document_id": seeded.document_id,
        "app_id": seeded.app_id,
        "model": seeded.app_id,  # the OpenAI model lookup takes an application's id
    }
    paragraphs = requests.get(
        f"{url}/api/dataset/{seeded.dataset_id}/document/{seeded.document_id}/paragraph/1/1",
        headers=operator,
        timeout=30,
    ).json()["data"]["records"]
    ids["paragraph_id"] = str(paragraphs[0]["id"])
    keys = requests.get(f"{url}/api/application/{seeded.app_id}/api_key", headers=operator, timeout=30).json()["data"]
    ids["api_key_id"] = str(keys[0]["id"])
    model = requests.post(
        f"{url}/api/model", json={**MODEL, "name": f"fuzz-model-{uuid.uuid4().hex[:8]}"}, headers=operator, timeout=30
    )
    ids["model_id"] = str(model.json()["data"]["id"])
    records = requests.get(
        f"{url}/api/application/{seeded.app_id}/chat/{chat_id}/chat_record/1/1", headers=headers, timeout=30
    ).json()["data"]["records"]
    pages = {"page": "1", "size": "20", "current_page": "1", "page_size": "20"}
    return {**ids, "chat_id": chat_id, "record_id": str(records[0]["id"]), **pages}


def case_strategies(
    operation: Any, ids: dict[str, str], bodies: dict[tuple[str, str], Any]
) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any] | None]:
    """Random cases (valid and invalid by the schema, and valid at ids that exist), and the aimed
    ones, if the operation has any: the known-good body at those ids where there is one, else
    valid cases at those ids."""
    names = {p.name for p in operation.path_parameters}
    real = {k: v for k, v in ids.items() if k in names}
    at_real_ids = operation.as_strategy(GenerationMode.POSITIVE, path_parameters=real)
    sources = [operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE)]
    random = st.one_of([*sources, at_real_ids] if real else sources)
    body = bodies.get((operation.method.upper(), operation.path))
    if body is not None:
        return random, operation.as_strategy(GenerationMode.POSITIVE, path_parameters=real, body=body)
    return random, at_real_ids if real else None


def fuzz_operation(
    operation: Any, strategy: st.SearchStrategy[Any], send: Callable[[Any], None], examples: int
) -> None:
    """Up to ``examples`` cases, derandomised; findings are collected, not raised, so nothing
    is shrunk and the run stays within its time."""

    @hypothesis.settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(case=strategy)
    def run(case: Any) -> None:
        send(case)

    run()


def mutation_order(operation: Any) -> tuple[int, int]:
    """Reads and creations first, then updates (deleting an attached question among them: it
    changes a paragraph, which must still be there), then deletions (a document before its
    dataset), so the real ids stay real, and unchanged, for as long as possible; then the
    person's own password change, which ends their other credentials (the personal token the
    routes before it use); signing out, which ends the caller's session, last of all."""
    if operation.path == "/api/user/re_password":
        return 3, 0
    if operation.path == "/api/user/logout":
        return 4, 0
    rank = {"PUT": 1, "DELETE": 2}.get(operation.method.upper(), 0)
    if "{problem_id}" in operation.path:
        rank = 1
    return rank, -operation.path.count("/") if rank == 2 else 0


def own_account_route(path: str) -> bool:
    """The routes about the signed-in person's own account: only a person gets past them."""
    return path == "/api/user" or path.startswith("/api/user/")


def visitor_route(path: str) -> bool:
    """The routes only a share-link visitor gets past: its own chat list and its application's profile."""
    return "/chat/client/" in path or path == "/api/application/profile"


def fuzz_as(
    seeded: Seeded,
    people: People,
    spec: dict[str, Any],
    headers: dict[str, str],
    examples: int,
    tally: Tally,
    only: Callable[[str], bool] | None = None,
    caller: str = "key",
) -> None:
    """One caller over every operation (or those ``only`` keeps), in ``mutation_order``."""
    schema = schemathesis.openapi.from_dict(spec)
    operations = []
    for result in schema.get_all_operations():  # an operation it cannot read fails the run: none is skipped
        assert isinstance(result, Ok), f"schemathesis cannot read an operation: {result.err()}"
        if only is None or only(result.ok().path):
            operations.append(result.ok())
    operations.sort(key=mutation_order)
    ids = {**real_ids(seeded, headers), "user_id": people.victim_id, "token_id": people.token_id}
    bodies = known_bodies(seeded.app_id, seeded.access_token, people)
    session = requests.Session()

    def send(case: Any) -> None:
        try:
            response = case.call(base_url=seeded.stack.url, session=session, headers=headers, timeout=60)
        except (requests.RequestException, ValueError):  # e.g. a header value no client can send
            tally.unsendable += 1
            return
        check(case, response, tally, caller)

    for operation in operations:
        tally.fuzzed.add(f"{operation.method.upper()} {operation.path}")
        # Each operation on an attached question gets one of its own: detaching one uses it up.
        own = {**ids, "problem_id": attached_question(seeded, ids)} if "{problem_id}" in operation.path else ids
        random, aimed = case_strategies(operation, own, bodies)
        if aimed is not None:  # first, while the ids are still real: a few cases sure to get past validation
            fuzz_operation(operation, aimed, send, AIMED_EXAMPLES)
        fuzz_operation(operation, random, send, examples)


def attached_question(seeded: Seeded, ids: dict[str, str]) -> str:
    """A new question attached (by the operator) to the seeded paragraph; its id."""
    path = f"/api/dataset/{ids['dataset_id']}/document/{ids['document_id']}/paragraph/{ids['paragraph_id']}/problem"
    made = requests.post(
        f"{seeded.stack.url}{path}",
        json={"content": f"fuzz {uuid.uuid4().hex[:8]}：探视几点？"},
        headers=operator_headers(seeded),
        timeout=30,
    )
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


async def visitor_token(seeded: Seeded) -> str:
    async with seeded.stack.http(anonymous=True) as anonymous:
        signed_in = await anonymous.post("/api/application/authentication", json={"access_token": seeded.access_token})
    return str(signed_in.json()["data"])


async def make_people(seeded: Seeded) -> People:
    """The person (signed in, with a personal token) and the victim, made by the operator."""
    async with seeded.stack.http() as operator:
        for name, role in ((PERSON, "admin"), (VICTIM, "viewer")):
            made = await operator.post("/api/user_manage", json={"username": name, "password": PASSWORD, "role": role})
            assert made.status_code == 200, made.text
        victim_id = str(made.json()["data"]["id"])
        link = await operator.post(f"/api/user_manage/{victim_id}/signin_link")
        assert link.status_code == 200, link.text
        signed_in = await operator.post("/api/user/login", json={"username": PERSON, "password": PASSWORD})
        assert signed_in.status_code == 200, signed_in.text
        session = str(signed_in.json()["data"])
        token = await operator.post("/api/user/token", json={"name": "kept"}, headers={"Authorization": session})
        assert token.status_code == 200, token.text
    return People(session, str(token.json()["data"]["id"]), victim_id, str(link.json()["data"]["code"]))


@pytest.fixture(scope="module")
async def fuzzed_stack(tmp_path_factory: pytest.TempPathFactory, embedder, offline_model) -> AsyncIterator[Seeded]:
    # Random sign-ins fail by the hundred from one address: the known-good one must still be tried.
    folder, limit = tmp_path_factory.mktemp("fuzz"), 10_000
    running = private_stack(
        folder,
        embedder=embedder,
        model=offline_model,
        signin_failures=limit,
        signin_address_failures=limit,
        signins_per_ip=limit,
    )
    async with running as seeded:
        yield seeded


async def test_fuzzing_every_route_finds_no_5xx_no_internal_text_and_no_shape_off_schema(fuzzed_stack: Seeded) -> None:
    async with fuzzed_stack.stack.http() as client:
        spec = with_route_bodies((await client.get("/openapi.json")).json())
    operations = sum(len(methods) for methods in spec["paths"].values())
    tally = Tally()
    escaped = EscapedErrors()
    logging.getLogger("uvicorn.error").addHandler(escaped)
    started = time.monotonic()
    try:  # the stack serves in this event loop; the fuzzer's blocking client runs in a thread
        # The visitor first: the operator's run rotates and switches off the share link.
        people = await make_people(fuzzed_stack)
        visitor = {"Authorization": await visitor_token(fuzzed_stack)}  # bare, as MaxKB's page sends it
        fuzz = functools.partial(fuzz_as, fuzzed_stack, people, spec)
        await asyncio.to_thread(fuzz, visitor, KEY_EXAMPLES, tally, visitor_route, "visitor")
        key = {"Authorization": f"Bearer {fuzzed_stack.api_key}"}
        await asyncio.to_thread(fuzz, key, KEY_EXAMPLES, tally)
        person = {"Authorization": f"Bearer {people.session}"}  # signs themselves out at the end
        await asyncio.to_thread(fuzz, person, KEY_EXAMPLES, tally, own_account_route, "person")
        # Last: the operator's run deletes what it finds.
        operator = operator_headers(fuzzed_stack)
        await asyncio.to_thread(fuzz, operator, OPERATOR_EXAMPLES, tally, None, "operator")
    finally:
        logging.getLogger("uvicorn.error").removeHandler(escaped)
    took = time.monotonic() - started
    print(
        f"\nfuzz: {tally.requests} requests over {operations} operations in {took:.1f} s "
        f"({tally.unsendable} unsendable cases); statuses {dict(sorted(tally.statuses.items()))}; "
        f"{len(tally.answered)} operations answered 2xx at least once"
    )
    listed = {f"{method.upper()} {path}" for path, methods in spec["paths"].items() for method in methods}
    print(f"never 2xx: {sorted(listed - tally.answered)}")
    assert tally.fuzzed == listed, f"operations not fuzzed: {sorted(listed - tally.fuzzed)}"
    assert not tally.findings, "\n".join(tally.findings[:20])
    assert not escaped.messages, "\n".join(escaped.messages[:20])
    assert tally.requests >= operations * (KEY_EXAMPLES + OPERATOR_EXAMPLES) // 2, "most cases must have been sent"
    # Not a run of 404s: every operation but those a schema cannot reach (and one more, by
    # chance) got past validation and access to real work.
    unreached = listed - tally.answered - SCHEMA_CANNOT_REACH
    assert len(unreached) <= 1, sorted(unreached)


def test_the_detectors_see_what_they_are_for() -> None:
    """The run can fail: internal text and a streamed 5xx are caught, an echo of the request is not."""

    @dataclass
    class Sent:
        path_parameters: dict[str, str] = field(default_factory=dict)
        query: None = None
        headers: None = None
        body: dict[str, str] = field(default_factory=lambda: {"message": "KeyError"})

    assert leaked(Sent(), 'Traceback (most recent call last):\n  File "x"') == "Traceback"
    assert leaked(Sent(), f"{REPO}/services/chat/ask.py") is not None
    assert leaked(Sent(), "(sqlite3.OperationalError) database or disk is full") is not None
    assert leaked(Sent(), "UPDATE chat_record SET answer=?") == "UPDATE chat_record SET"
    assert leaked(Sent(), '{"message": "unknown field KeyError"}') is None, "the request's own text echoed back"
    assert leaked(Sent(), '{"code":404,"message":"not found","data":null}') is None
    assert STREAMED_5XX.search('event:error\ndata:{"code":500,"message":"internal error"}\n\n')
    assert STREAMED_5XX.search('data: {"error": {"message": "x", "type": "server_error"}}')
    assert not STREAMED_5XX.search('event:error\ndata:{"code":409,"message":"busy"}\n\n')


def test_the_conformance_checks_see_a_shape_off_its_schema() -> None:
    """A key the shape does not name, an undocumented status and an undocumented content type
    are each a finding; the documented answer is none."""
    shape = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    answer = {"description": "", "content": {"application/json": {"schema": shape}}}
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "paths": {"/x": {"get": {"responses": {"200": answer}}}},
    }
    case = schemathesis.openapi.from_dict(spec)["/x"]["GET"].Case()

    def response(status: int, body: bytes, content_type: str = "application/json") -> requests.Response:
        sent = requests.Response()
        sent.status_code, sent._content = status, body
        sent.raw = urllib3.HTTPResponse(headers={"Content-Type": content_type}, status=status)
        sent.request, sent.elapsed = requests.Request("GET", "http://t/x").prepare(), datetime.timedelta(0)
        return sent

    assert nonconformance(case, response(200, b'{"a":1}')) == []
    assert "Additional properties" in " ".join(nonconformance(case, response(200, b'{"a":1,"b":2}')))
    assert "Undocumented status code" in " ".join(nonconformance(case, response(418, b'{"a":1}')))
    assert "Undocumented Content-Type" in " ".join(nonconformance(case, response(200, b"a,b", "text/csv")))
