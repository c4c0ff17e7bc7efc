"""The record save rule for text the database refuses: a paragraph stored before the entry guard
existed (or written by another tool) holds a NUL, the offline model quotes it, and PostgreSQL
refuses the record's values. The save is made again with every text made storable, so the answer
still ends with ``is_end`` and the record reads ``answered`` with what the client was shown
(before: ``event:error`` 500, and the record was closed ``interrupted`` with an empty answer).

On SQLite, which stores a NUL silently, the same question is saved as it was shown.
"""

from __future__ import annotations

from kbcore.text.storable import storable_text
from services.retrieval.store.base import VectorStore
from tests.harness import Stack
from tests.nul_paragraph import QUESTION, WITH_NUL, application_citing_a_nul
from tests.sse_client import answer_text, ask


async def test_an_answer_quoting_a_stored_nul_is_saved_answered_with_what_the_client_was_shown(
    stack: Stack, store: VectorStore, unique: str
) -> None:
    application_id = await application_citing_a_nul(stack, store, unique)
    async with stack.http() as client:
        opened = await client.get(f"/api/application/{application_id}/chat/open")
        assert opened.status_code == 200, opened.text
        chat_id = opened.json()["data"]
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200, response.text
        assert not [f for f in frames if f.kind == "error"], frames[-3:]
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]
        shown = answer_text(frames)
        assert "\x00" in shown, "the test needs an answer that quotes the NUL paragraph"
        listed = await client.get(f"/api/application/{application_id}/chat/{chat_id}/chat_record/1/20")
        assert listed.status_code == 200, listed.text
        [record] = listed.json()["data"]["records"]
        record_id = record["id"]
        detail = await client.get(f"/api/application/{application_id}/chat/{chat_id}/chat_record/{record_id}")
        assert detail.status_code == 200, detail.text
    postgres = stack.settings.resolved_database_url().startswith("postgresql")
    saved = storable_text if postgres else (lambda text: text)
    assert record["status"] == "answered", record
    assert "8:30" in shown and record["answer_text"] == saved(shown), "what the client was shown is what was saved"
    [cited] = detail.json()["data"]["paragraph_list"]
    assert cited["content"] == saved(WITH_NUL), "the details keep the evidence, made storable alike"
