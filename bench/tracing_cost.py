"""What tracing costs: CPU per question of our four processes at 64 concurrent chats,
with ``KB_OTLP_ENDPOINT`` empty (off, the default) and pointing at an OTLP/HTTP sink.

The same stack, model server and questions as the pipeline section's target configuration
(remote embeddings), started three times: off, on, and on with one question in ten recorded
(the SDK's ratio sampler; the others propagate their trace id only). The sink runs on a thread of this
process and answers 200 to every export without decoding it: a collector is another machine's
CPU; the exporting processes' encoding and sending is counted, since it runs in them.

``python -m bench.tracing_cost`` runs this section alone and prints its rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from bench import pipeline
from bench.processes import gateway_client, running_stack
from bench.table import Row, run_alone

SECTION = "tracing"
CONFIG = pipeline.CONFIGS[0]  # remote embeddings: the pipeline's target configuration
WAVES = 3
SERVICES = ("gateway", "chat", "context", "retrieval")
SAMPLE_ONE_IN_TEN = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
TARGET_OVERHEAD = 0.05  # on may cost at most 5% more CPU per question than off, else off by default


class _Sink(BaseHTTPRequestHandler):
    received = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextlib.contextmanager
def otlp_sink() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=server.serve_forever, name="otlp-sink", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def cpu_ms_per_question(extra_env: dict[str, str]) -> dict[str, float]:
    """CPU ms per question by process over WAVES waves of 64 concurrent questions, after a warm-up wave."""
    questions = pipeline.Questions()
    async with pipeline.model_server() as (_, model_url):
        env = {
            "KB_MODEL_BASE_URL": f"{model_url}/v1",
            "KB_MODEL_API_KEY": "bench",
            "KB_MODEL_CHAT": "bench-chat",
            "KB_EMBEDDING_BASE_URL": f"{model_url}/v1",
            "KB_EMBEDDING_DIMENSION": "384",
            **extra_env,
        }
        async with running_stack(env) as (info, app_id):
            limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
            async with gateway_client(info, limits=limits) as client:
                chats = await asyncio.gather(*(pipeline.open_chat(client, app_id) for _ in range(64)))
                warm = questions.wave(CONFIG, 0, 64)
                await asyncio.gather(*(pipeline.ask(client, c, s) for c, s in zip(chats, warm, strict=True)))
                # Chats opened before the measurement: only questions are counted, as in the pipeline section.
                waves = [
                    await asyncio.gather(*(pipeline.open_chat(client, app_id) for _ in range(64))) for _ in range(WAVES)
                ]
                pids = {name: int(info["pids"][name]) for name in SERVICES}
                before = {name: pipeline._cpu_seconds(pid) for name, pid in pids.items()}
                for turn, chats in enumerate(waves):
                    wave = questions.wave(CONFIG, turn % 2, 64)
                    await asyncio.gather(*(pipeline.ask(client, c, s) for c, s in zip(chats, wave, strict=True)))
                asked = WAVES * 64
                return {
                    name: round((pipeline._cpu_seconds(pid) - before[name]) * 1000 / asked, 2)
                    for name, pid in pids.items()
                }


async def run() -> tuple[list[Row], dict[str, Any]]:
    calibration = [pipeline.calibration_ms()]
    off = await cpu_ms_per_question({})
    with otlp_sink() as url:
        on = await cpu_ms_per_question({"KB_OTLP_ENDPOINT": url, "OTEL_BSP_SCHEDULE_DELAY": "1000"})
        exports = _Sink.received
        sampled = await cpu_ms_per_question({"KB_OTLP_ENDPOINT": url, **SAMPLE_ONE_IN_TEN})
    calibration.append(pipeline.calibration_ms())
    total_off, total_on, total_sampled = sum(off.values()), sum(on.values()), sum(sampled.values())
    overhead = total_on / total_off - 1
    by_process = ", ".join(f"{name} {off[name]:.1f} → {on[name]:.1f}" for name in SERVICES)
    rows = [
        Row(
            SECTION,
            f"CPU per question at 64 chats, four processes, tracing off → on ({by_process}; "
            f"{exports} exports; calibration {calibration[0]:.0f}/{calibration[-1]:.0f} ms)",
            f"{total_off:.1f} → {total_on:.1f} ms",
        ),
        Row(
            SECTION,
            "tracing's CPU overhead per question (over the target: tracing stays off by default)",
            f"{overhead:+.1%}",
            f"≤ +{TARGET_OVERHEAD:.0%}",
            overhead <= TARGET_OVERHEAD,
        ),
        Row(
            SECTION,
            "tracing on, one question in ten recorded (OTEL_TRACES_SAMPLER=parentbased_traceidratio, 0.1): "
            "CPU overhead per question",
            f"{total_sampled / total_off - 1:+.1%}",
        ),
    ]
    raw = {
        "off_ms": off,
        "on_ms": on,
        "sampled_ms": sampled,
        "overhead": overhead,
        "exports": exports,
        "calibration_ms": calibration,
    }
    return rows, raw


if __name__ == "__main__":
    run_alone(run)
