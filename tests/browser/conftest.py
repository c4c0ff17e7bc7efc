"""Debian's chromium, headless, driven by Playwright against the gateway's pages.

Playwright only drives the browser: it never downloads one (``make test`` installs chromium and
fonts-wqy-microhei through ``scripts/test-deps.sh``, so Chinese renders in the screenshots).
Every page records the requests it makes, and a test fails if one went anywhere but the gateway
that served the page.

The operator page (and a chat page opened from it) needs someone signed in: ``operator_page``
opens a tab that already holds the stack's operator token where the page keeps its sign-in, as
if it had been pasted under "使用令牌"; ``sign_in_tab`` does the same with any token."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from playwright.async_api import Browser, Locator, Page, async_playwright
from sqlalchemy.engine import make_url

from kbcore.rpc.caller_token import operator_token
from tests.fakes.openai_server import ChatReply, FakeOpenAI, plausible_route
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# Without the networking flags chromium reaches out to Google at start, which a closed
# network refuses many times over; the profile is a new empty folder per launch (Playwright's).
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SLOW_ANSWER = [f"第{i}段回答内容。" for i in range(1, 61)]


class NewPage(Protocol):
    """``await new_page(gateway_url)``, or with ``locale="en-US"`` for an English browser."""

    def __call__(self, gateway_url: str, *, locale: str = "zh-CN") -> Awaitable[Page]: ...


OperatorPage = Callable[[Stack], Awaitable[Page]]
# Where the operator page keeps the tab's bearer token (gateway/static/admin-api.js), and the
# mark that the test has put one there already in this tab.
TOKEN_KEY = "kb.admin"
SEEDED_KEY = "kb.test.signed_in"


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (make test does: scripts/test-deps.sh)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        yield launched
        await launched.close()


@pytest.fixture
async def new_page(browser: Browser) -> AsyncIterator[NewPage]:
    """``await new_page(gateway_url)``: a fresh browser context (no storage from other tests),
    1280×900, Chinese locale unless ``locale`` names another (its Accept-Language too); on
    teardown, every request must have gone to ``gateway_url``."""
    opened: list[tuple[str, list[str]]] = []
    contexts = []

    async def open_page(gateway_url: str, *, locale: str = "zh-CN") -> Page:
        context = await browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale)
        contexts.append(context)
        context.set_default_timeout(30_000)
        urls: list[str] = []
        context.on("request", lambda request: urls.append(request.url))
        context.on("dialog", lambda dialog: dialog.accept())
        opened.append((gateway_url, urls))
        return await context.new_page()

    yield open_page
    for context in contexts:
        await context.close()
    for gateway_url, urls in opened:
        elsewhere = [u for u in urls if not (u == gateway_url or u.startswith(gateway_url + "/"))]
        assert not elsewhere, f"the page made requests outside the gateway: {elsewhere}"


def signed_in_script(token: str) -> str:
    """A script run before the page's own on every load: the first load in a tab finds ``token``
    in its session storage; later loads leave the storage alone, so a sign-out stays signed out."""
    return (
        "(() => { try {"
        f" if (sessionStorage.getItem({json.dumps(SEEDED_KEY)})) return;"
        f" sessionStorage.setItem({json.dumps(TOKEN_KEY)}, {json.dumps(token)});"
        f" sessionStorage.setItem({json.dumps(SEEDED_KEY)}, '1');"
        " } catch (e) {} })();"  # about:blank has no storage of the gateway's
    )


async def sign_in_tab(page: Page, token: str) -> None:
    """Every tab of ``page``'s context opens the operator page signed in with ``token``."""
    await page.context.add_init_script(script=signed_in_script(token))


async def new_dataset_selected(page: Page, name: str) -> None:
    """On the operator page: a knowledge base made through its form, then selected (its
    documents, upload form and hit test shown)."""
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    await page.get_by_test_id("dataset").filter(has_text=name).click()


@pytest.fixture
def operator_page(new_page: NewPage) -> OperatorPage:
    """``await operator_page(stack)``: a page as ``new_page`` gives, whose tabs open the operator
    page (and the chat pages it links to) signed in with the stack's operator token."""

    async def open_signed_in(stack: Stack) -> Page:
        page = await new_page(stack.url)
        await sign_in_tab(page, operator_token(stack.settings))
        return page

    return open_signed_in


def suite_database() -> str:
    """The kind of database this run's suite is on: ``sqlite``, or ``postgresql`` when
    ``KB_DATABASE_URL`` names one (the fixture ``database_url`` reads the same variable)."""
    url = os.environ.get("KB_DATABASE_URL", "")
    return make_url(url).get_backend_name() if url else "sqlite"


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Iterator[Path]:
    """``test-artifacts/<database>/<test name>/``, emptied first, for the screenshots a person
    looks at. One folder per database: `make test` runs the SQLite and PostgreSQL passes at the
    same time, and in one shared folder each pass would empty and overwrite the other's."""
    folder = ARTIFACTS / suite_database() / re.sub(r"[^\w.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    yield folder


# Evidence always sufficient; the answer streams for about six seconds, time to press stop.
slow_route = plausible_route(lambda: ChatReply.stream(SLOW_ANSWER, chunk_delay=0.1))


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=slow_route) as server:
        yield server


async def saved_record(page: Page, record: Locator, stack: Stack) -> dict[str, Any]:
    """The record a chat page shows, as the HTTP API returns it: what the page must agree with."""
    record_id = await record.get_attribute("data-record-id")
    chat_id = await page.evaluate("() => Object.entries(localStorage).find(([k]) => k.startsWith('kb.chat.'))[1]")
    async with stack.http() as client:
        reply = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}")
    saved: dict[str, Any] = reply.json()["data"]
    return saved
