"""Questions running in this process, so Stop can reach them by chat id."""

from __future__ import annotations

import asyncio


class RunningQuestions:
    def __init__(self) -> None:
        self._stops: dict[str, asyncio.Event] = {}

    def register(self, chat_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._stops[chat_id] = event
        return event

    def unregister(self, chat_id: str, event: asyncio.Event) -> None:
        if self._stops.get(chat_id) is event:
            del self._stops[chat_id]

    def stop(self, chat_id: str) -> bool:
        event = self._stops.get(chat_id)
        if event is None:
            return False
        event.set()
        return True
