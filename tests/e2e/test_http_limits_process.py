"""``python -m gateway`` as a process, started with a low open-file limit: it raises its soft
limit to the hard one, sizes its connection cap below what the descriptors hold, and so answers
a flood of connections with 503 (an accepted connection, so a free descriptor) instead of
running out of them, and serves again once the flood is gone."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gateway.edge.descriptors import connection_cap
from tests.eventually import eventually
from tests.process_stack import listening_port

pytestmark = [pytest.mark.slow, pytest.mark.own_database]  # a process of its own, no database

REPO = Path(__file__).resolve().parents[2]
SOFT, HARD = 256, 600  # the gateway's open-file limit as it starts
FLOOD = 700  # connections held open: more than the gateway has descriptors for
DEADLINE = 60.0


@dataclass
class GatewayProcess:
    pid: int
    port: int
    log: Path


def _low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (SOFT, HARD))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """The gateway under a soft limit of SOFT and a hard one of HARD, with no per-address cap
    (every connection here comes from 127.0.0.1) and the default total cap, which does not fit."""
    run_dir = tmp_path_factory.mktemp("gateway-limits")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("KB_")},
        "KB_DATA_DIR": str(run_dir),
        "KB_RUN_DIR": str(run_dir),
        "KB_HTTP_PORT": "0",
        "KB_CHAT_TARGET": "127.0.0.1:9",
        "KB_RETRIEVAL_TARGET": "127.0.0.1:9",
        "KB_HTTP_MAX_CONNECTIONS_PER_IP": "0",
        "KB_HTTP_HEADER_TIMEOUT": "300",
        "KB_LOG_LEVEL": "WARNING",
    }
    log = run_dir / "gateway.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "gateway"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=out,
            preexec_fn=_low_descriptor_limit,
        )
    try:
        port = listening_port(process, run_dir / "gateway.port", timeout=DEADLINE, output=log.read_text)
        yield GatewayProcess(process.pid, port, log)
    finally:
        process.terminate()
        process.wait(timeout=30)


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def soft_limit(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/limits").read_text().splitlines() if x.startswith("Max open files"))
    return int(line.split()[3])


async def status_of(port: int, wire: bytes) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(wire)
        async with asyncio.timeout(DEADLINE):
            line = await reader.readuntil(b"\r\n")
        return int(line.split()[1])
    finally:
        writer.close()


REQUEST = b"GET /ui/labels.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


async def answers_become(port: int, expected: int, meanwhile: int) -> None:
    """Ask until the gateway answers ``expected``; any answer but that or ``meanwhile`` fails at once."""

    async def status() -> int:
        found = await status_of(port, REQUEST)
        if found not in (expected, meanwhile):
            pytest.fail(f"answered {found}: neither {expected} nor, until then, {meanwhile}")
        return found

    await eventually(
        status, lambda found: found == expected, timeout=DEADLINE, interval=0.05, what=f"an answer of {expected}"
    )


def test_the_gateway_raises_its_soft_open_file_limit_to_the_hard_one(gateway: GatewayProcess) -> None:
    assert soft_limit(gateway.pid) == HARD
    cap = connection_cap(4096, HARD)
    assert cap < HARD - 200
    assert f"keeping at most {cap} connections" in gateway.log.read_text()


async def test_a_flood_of_connections_gets_503_not_resets_and_leaves_descriptors_free(
    gateway: GatewayProcess,
) -> None:
    cap = connection_cap(4096, HARD)
    held = []
    try:
        for _ in range(FLOOD):
            held.append(await asyncio.open_connection("127.0.0.1", gateway.port))
            held[-1][1].write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never finish
        await answers_become(gateway.port, 503, meanwhile=200)  # accepted, answered, closed
        held_by_gateway = open_files(gateway.pid)
        print(f"open files with the flood held: {held_by_gateway} (cap {cap})")
        assert cap <= held_by_gateway < HARD - 100
    finally:
        for _, writer in held:
            writer.close()
    await answers_become(gateway.port, 200, meanwhile=503)
