"""Keeps the local stack's processes running: a service that dies is started again.

``make run`` is one machine and no orchestrator, so without this a crashed or OOM-killed
service stayed dead and every route answered 503 until someone noticed. A dead process is
restarted after a backoff (0.5 s, doubling to 10 s, back to 0.5 s once it had run for a minute)
so a service that dies at once is not restarted in a tight loop, and each restart is logged.
The restarted process gets the port its predecessor bound, so the targets the other processes
were given stay right.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("stack")
POLL_SECONDS = 0.1


@dataclass
class Backoff:
    initial: float = 0.5
    ceiling: float = 10.0
    healthy_after: float = 60.0
    current: float = 0.0

    def next_delay(self, ran_for: float) -> float:
        """The wait before the next start of a process that ran ``ran_for`` seconds."""
        if self.current == 0.0 or ran_for >= self.healthy_after:
            self.current = self.initial
        delay = self.current
        self.current = min(self.current * 2, self.ceiling)
        return delay


@dataclass
class Supervised:
    """One service: how to start it, and the process running it now."""

    name: str
    module: str
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    started_at: float = field(default_factory=time.monotonic)
    backoff: Backoff = field(default_factory=Backoff)
    restarts: int = 0


Spawn = Callable[[Supervised], subprocess.Popen[bytes]]
Restarted = Callable[[Supervised, float], None]


class Supervisor:
    """Watches every service and restarts the ones that exit, until ``stop``."""

    def __init__(self, spawn: Spawn, restarted: Restarted) -> None:
        self._spawn = spawn
        self._restarted = restarted
        self._tasks: list[asyncio.Task[None]] = []
        self.stopping = False

    def watch(self, services: list[Supervised]) -> None:
        self._tasks.extend(asyncio.create_task(self._keep_running(s)) for s in services)

    def stop(self) -> None:
        """No more restarts: what exits from now on is being stopped on purpose."""
        self.stopping = True
        for task in self._tasks:
            task.cancel()

    async def _keep_running(self, service: Supervised) -> None:
        while True:
            while service.process.poll() is None:
                await asyncio.sleep(POLL_SECONDS)
            if self.stopping:
                return
            died_at = time.monotonic()
            ran_for = died_at - service.started_at
            delay = service.backoff.next_delay(ran_for)
            log.warning(
                "%s (pid %d) exited with code %s after %.1f s; restarting it in %.1f s",
                service.name,
                service.process.pid,
                service.process.returncode,
                ran_for,
                delay,
            )
            await asyncio.sleep(delay)
            if self.stopping:
                return
            service.process = self._spawn(service)
            service.started_at = time.monotonic()
            service.restarts += 1
            log.warning("%s restarted (pid %d, restart %d)", service.name, service.process.pid, service.restarts)
            self._restarted(service, died_at)
