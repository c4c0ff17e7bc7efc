"""The conversation log over HTTP: MaxKB's page shape with every filter as a query parameter,
the export of the filtered set as CSV and XLSX (formula text neutralised, the XLSX opened with
openpyxl), the bound on the export said in its headers, and each bad input a 4xx with a sentence."""

from __future__ import annotations

import csv
import io

import openpyxl
import pytest

import services.chat.admin.conversation_log as chat_log
from gateway.presenter import LOG_EXPORT_COLUMNS
from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

PLAIN = "员工年假有几天？"
FORMULA = '=HYPERLINK("http://x") 100% 年假_天数'


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def logged(stack: Stack, unique: str) -> dict[str, str]:
    """An application with two questions: the operator's plain one, and a visitor's with
    formula text and LIKE metacharacters."""
    async with stack.http() as operator:
        app = (
            await operator.post(
                "/api/application", json={"name": f"日志-{unique}", "dataset_id_list": [DEMO_DATASET_ID]}
            )
        ).json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app}/access_token", json={"access_num": 20})).json()["data"]
        chat_id = (await operator.get(f"/api/application/{app}/chat/open")).json()["data"]
        response, frames = await ask(operator, chat_id, PLAIN)
        assert response.status_code == 200 and frames[-1].data["is_end"], frames[-2:]
        visitor = (
            await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
        ).json()["data"]
    async with stack.http(headers=bearer(visitor)) as client:
        visitor_chat = (await client.get(f"/api/application/{app}/chat/open")).json()["data"]
        response, frames = await ask(client, visitor_chat, FORMULA)
        assert response.status_code == 200 and frames[-1].data["is_end"], frames[-2:]
    return {"app": app, "visitor_token": visitor}


async def test_the_log_page_and_its_filters(stack: Stack, logged: dict[str, str]) -> None:
    app = logged["app"]
    async with stack.http() as operator:
        everything = (await operator.get(f"/api/application/{app}/chat/1/20")).json()["data"]
        assert (everything["current"], everything["size"], everything["total"]) == (1, 20, 2)
        newest, oldest = everything["records"]
        assert (newest["problem_text"], oldest["problem_text"]) == (FORMULA, PLAIN), "newest first"
        assert (newest["log_source"], oldest["log_source"]) == ("share_link", "page")
        assert newest["agent_trace"] and newest["rounds"] == len(newest["agent_trace"])
        assert (newest["vote"], newest["star_num"], newest["trample_num"]) == ("", 0, 0)

        async def questions(query: str) -> list[str]:
            reply = await operator.get(f"/api/application/{app}/chat/1/20?{query}")
            assert reply.status_code == 200, reply.text
            return [r["problem_text"] for r in reply.json()["data"]["records"]]

        assert await questions("source=share_link") == [FORMULA]
        assert await questions("source=page,api_key") == [PLAIN]
        assert await questions("source=page&source=share_link") == [FORMULA, PLAIN]
        assert await questions("text=%25") == [FORMULA], "% is a character"
        assert await questions("text=_") == [FORMULA] and await questions("abstract=年假_") == [FORMULA]
        assert await questions("text=年%25天") == []
        assert await questions("status=answered&vote=none") == [FORMULA, PLAIN]
        assert await questions("status=failed,stopped") == [] and await questions("vote=down") == []
        assert await questions("stop_reason=none") == []
        assert await questions("date_from=2000-01-01&date_to=2000-01-02") == []
        assert await questions("start_time=2000-01-01&end_time=9998-12-31") == [FORMULA, PLAIN]
        single = (await operator.get(f"/api/application/{app}/chat/2/1")).json()["data"]
        assert [r["problem_text"] for r in single["records"]] == [PLAIN] and single["total"] == 2


BAD = [
    ("chat/1/20?date_from=2026-02-01&date_to=2026-01-01", 400, "reversed"),
    ("chat/1/20?date_from=0000-01-01", 400, "YYYY-MM-DD"),
    ("chat/1/20?date_to=99999-01-01", 400, "YYYY-MM-DD"),
    ("chat/1/20?date_from=yesterday", 400, "YYYY-MM-DD"),
    ("chat/1/0", 400, "page_size must be between 1 and 100, got 0"),
    ("chat/1/1000000", 400, "page_size must be between 1 and 100, got 1000000"),
    ("chat/0/20", 400, "page must be 1 or more"),
    ("chat/1/99999999999", 400, "page_size"),
    ("chat/1/20?text=" + "x" * 10_000, 400, "at most 200 characters, got 10000"),
    ("chat/1/20?status=bogus", 400, "unknown status 'bogus'"),
    ("chat/1/20?vote=sideways", 400, "unknown vote"),
    ("chat/1/20?sufficient=maybe", 400, "sufficient must be true or false"),
]


@pytest.mark.parametrize(("path", "status", "words"), BAD)
async def test_bad_log_requests_are_4xx_with_a_sentence(
    stack: Stack, logged: dict[str, str], path: str, status: int, words: str
) -> None:
    async with stack.http() as operator:
        reply = await operator.get(f"/api/application/{logged['app']}/{path}")
    assert reply.status_code == status and words in reply.json()["message"], reply.text


async def test_unknown_application_and_a_visitor_are_refused(stack: Stack, logged: dict[str, str], unique: str) -> None:
    async with stack.http() as operator:
        missing = await operator.get(f"/api/application/no-such-{unique}/chat/1/20")
        assert missing.status_code == 404 and f"no-such-{unique}" in missing.json()["message"]
        export = await operator.post(f"/api/application/{logged['app']}/chat/export?format=pdf")
        assert export.status_code == 400 and "format must be one of csv, xlsx" in export.json()["message"]
    async with stack.http(headers=bearer(logged["visitor_token"])) as visitor:
        assert (await visitor.get(f"/api/application/{logged['app']}/chat/1/20")).status_code == 403
        assert (await visitor.post(f"/api/application/{logged['app']}/chat/export")).status_code == 403


async def test_csv_export_is_filtered_and_formula_safe(stack: Stack, logged: dict[str, str]) -> None:
    async with stack.http() as operator:
        reply = await operator.post(f"/api/application/{logged['app']}/chat/export?format=csv&source=share_link")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    assert reply.content.startswith("\ufeff".encode())
    assert (reply.headers["x-log-total"], reply.headers["x-log-exported"]) == ("1", "1")
    rows = list(csv.DictReader(io.StringIO(reply.content.decode("utf-8-sig"))))
    assert list(rows[0]) == LOG_EXPORT_COLUMNS and len(rows) == 1
    assert rows[0]["question"] == "'" + FORMULA, "a formula is shown as text"
    assert (rows[0]["log_source"], rows[0]["status"], rows[0]["vote"]) == ("share_link", "answered", "")


async def test_xlsx_export_opens_in_openpyxl_and_is_bounded(stack: Stack, logged: dict[str, str], monkeypatch) -> None:
    async with stack.http() as operator:
        reply = await operator.post(f"/api/application/{logged['app']}/chat/export")
        assert reply.status_code == 200 and "spreadsheetml" in reply.headers["content-type"], (
            "xlsx is the default, as MaxKB"
        )
        assert reply.headers["content-disposition"].endswith('.xlsx"')
        sheet = openpyxl.load_workbook(io.BytesIO(reply.content)).active
        table = [[cell.value for cell in row] for row in sheet.iter_rows()]
        assert table[0] == LOG_EXPORT_COLUMNS and len(table) == 3
        newest = dict(zip(LOG_EXPORT_COLUMNS, table[1], strict=True))
        assert newest["question"] == "'" + FORMULA and sheet.cell(row=2, column=4).data_type == "s"
        assert newest["log_source"] == "share_link" and newest["rounds"] >= 1 and newest["votes_down"] == 0
        assert dict(zip(LOG_EXPORT_COLUMNS, table[2], strict=True))["question"] == PLAIN

        monkeypatch.setattr(chat_log, "MAX_EXPORT_ROWS", 1)
        cut = await operator.post(f"/api/application/{logged['app']}/chat/export?format=xlsx")
        assert (cut.headers["x-log-total"], cut.headers["x-log-exported"]) == ("2", "1"), "the bound is said"
        assert len(list(openpyxl.load_workbook(io.BytesIO(cut.content)).active.iter_rows())) == 2
