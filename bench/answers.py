"""One question asked over HTTP and how it ended, as a visitor sees it: the benchmarks that count
failed answers under an attack or a load (hostile files, the NUL paragraph) read it the same way."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from kbcore.sse_decoder import SseFrame, SseParser

ANSWERED = "answered"


@dataclass(frozen=True)
class Answer:
    outcome: str  # ANSWERED, "HTTP <status>", "event:error <data>" or "no is_end"
    frames: list[SseFrame]


async def ask_once(client: httpx.AsyncClient, chat_id: str, question: str) -> Answer:
    async with client.stream(
        "POST", f"/api/application/chat_message/{chat_id}", json={"message": question, "progress": "named"}
    ) as reply:
        body = await reply.aread()
    if reply.status_code != 200:
        return Answer(f"HTTP {reply.status_code}", [])
    parser = SseParser()
    frames = [*parser.feed(body), *parser.close()]
    errors = [f.data for f in frames if f.event == "error"]
    if errors:
        return Answer(f"event:error {errors[0]}", frames)
    if not frames or '"is_end":true' not in frames[-1].data:
        return Answer("no is_end", frames)
    return Answer(ANSWERED, frames)
