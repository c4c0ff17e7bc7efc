"""Child processes started for a service (kbcore.process.child_process), on uvloop as the services run:
output read on the loop, the exit awaited, a kill seen as its signal, input to a child that is
already gone no error."""

from __future__ import annotations

import signal
import sys

import uvloop

from kbcore.process.child_process import start_child

ECHO = [sys.executable, "-c", "import sys; data = sys.stdin.buffer.read(); print(len(data)); sys.exit(7)"]


def test_input_goes_in_output_comes_out_and_the_exit_status_is_kept() -> None:
    async def run() -> tuple[bytes, int]:
        child = await start_child(ECHO, with_input=True)
        await child.feed(b"x" * (4 << 20))  # far more than a pipe holds: written while the child reads
        return await child.stdout.read(), await child.wait()

    output, status = uvloop.run(run())
    assert output.strip() == str(4 << 20).encode() and status == 7


def test_a_killed_child_ends_with_its_signal() -> None:
    async def run() -> tuple[int | None, int]:
        child = await start_child([sys.executable, "-c", "import signal; signal.pause()"])
        before = child.returncode
        child.kill()
        return before, await child.wait()

    assert uvloop.run(run()) == (None, -signal.SIGKILL)


def test_input_for_a_child_already_gone_is_no_error() -> None:
    async def run() -> int:
        child = await start_child([sys.executable, "-c", "raise SystemExit(4)"], with_input=True)
        await child.wait()
        await child.feed(b"y" * (1 << 20))
        return await child.wait()

    assert uvloop.run(run()) == 4
