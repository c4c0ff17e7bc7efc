"""``python -m tools.stack``: the whole stack on one machine, as separate processes.

Migrates the database, starts the context, retrieval and chat services and the gateway,
waits until each reports SERVING, loads the sample knowledge base and a demo application,
creates the first administrator on a new deployment and prints where to go (with its one-time
sign-in link), restarts a service that dies (``tools.supervise``), and stops everything
gracefully on Ctrl-C / SIGTERM. With ``--ephemeral`` every process binds port 0 and reports its
port through ``KB_RUN_DIR``; ``stack.json`` there names the current processes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kbcore.addresses.gateway_address import local_url, public_url
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings, SettingsError
from services.chat.accounts.first_admin import ensure_first_admin
from tools.demo_ids import persisted_demo_ids
from tools.seed_demo import SAMPLE_DOCS, seed_demo
from tools.signin_link import signin_url
from tools.supervise import Supervised, Supervisor

log = logging.getLogger("stack")
START_TIMEOUT = 120.0
# A restarted process binds the port its predecessor had: the others were told that target.
PORT_VARIABLES = {"context": "KB_CONTEXT_PORT", "retrieval": "KB_RETRIEVAL_PORT", "chat": "KB_CHAT_PORT"}
METRICS_PORT_VARIABLES = {
    "context": "KB_CONTEXT_METRICS_PORT",
    "retrieval": "KB_RETRIEVAL_METRICS_PORT",
    "chat": "KB_CHAT_METRICS_PORT",
}


def _wait_for_port(run_dir: Path, name: str, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    target = run_dir / f"{name}.port"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with code {process.returncode} while starting")
        if target.exists():
            return int(target.read_text())
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not start within {START_TIMEOUT:.0f} s")


async def _wait_serving(target: str, credential: str) -> None:
    channel = open_channel(target, credential)
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=START_TIMEOUT, wait_for_ready=True
        )
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            raise RuntimeError(f"{target} reports {reply.status}")
    finally:
        await channel.close()


class Stack:
    def __init__(self, settings: Settings, run_dir: Path, ephemeral: bool) -> None:
        self.settings = settings
        self.run_dir = run_dir
        self.ephemeral = ephemeral
        self.services: list[Supervised] = []
        self.env = {**os.environ, "KB_RUN_DIR": str(run_dir), "KB_DATA_DIR": str(settings.data_dir)}
        self.info: dict[str, object] = {}
        self.supervisor = Supervisor(self._spawn, self._restarted)
        self._comebacks: list[asyncio.Task[None]] = []
        self.metrics: dict[str, str] = {}  # service → its /metrics URL (the gateway's is under its URL)

    @property
    def processes(self) -> list[tuple[str, subprocess.Popen[bytes]]]:
        return [(s.name, s.process) for s in self.services]

    def _spawn(self, service: Supervised) -> subprocess.Popen[bytes]:
        (self.run_dir / f"{service.name}.port").unlink(missing_ok=True)
        return subprocess.Popen([sys.executable, "-m", service.module], env=service.env)

    def _launch(self, name: str, module: str, extra: dict[str, str]) -> Supervised:
        """Start the service's process; ``_listening`` waits for its port."""
        env = {**self.env, **extra}
        if self.ephemeral and name in METRICS_PORT_VARIABLES:
            env[METRICS_PORT_VARIABLES[name]] = "0"
        service = Supervised(name, module, env, subprocess.Popen([sys.executable, "-m", module], env=env))
        self.services.append(service)
        return service

    def _listening(self, service: Supervised) -> int:
        """The port the service announced, kept in its environment for a restart to bind."""
        port = _wait_for_port(self.run_dir, service.name, service.process)
        service.env[PORT_VARIABLES.get(service.name, "KB_HTTP_PORT")] = str(port)
        self._learn_metrics_port(service.name, service.env)
        return port

    def _start(self, name: str, module: str, extra: dict[str, str]) -> int:
        return self._listening(self._launch(name, module, extra))

    def _learn_metrics_port(self, name: str, env: dict[str, str]) -> None:
        """The service's metrics port (announced before its gRPC port), kept for a restart to bind."""
        announced = self.run_dir / f"{name}-metrics.port"
        if name in METRICS_PORT_VARIABLES and announced.exists():
            port = int(announced.read_text())
            env[METRICS_PORT_VARIABLES[name]] = str(port)
            self.metrics[name] = f"http://{self.settings.grpc_host}:{port}/metrics"

    def supervise(self) -> None:
        """From now on a service that dies is restarted (before this, it fails the start)."""
        self.supervisor.watch(self.services)

    def _restarted(self, service: Supervised, died_at: float) -> None:
        self._comebacks.append(asyncio.create_task(self._came_back(service, died_at)))

    async def _came_back(self, service: Supervised, died_at: float) -> None:
        try:
            port = await asyncio.to_thread(_wait_for_port, self.run_dir, service.name, service.process)
        except RuntimeError as exc:
            log.warning("%s did not come back: %s", service.name, exc)
            return
        log.warning(
            "%s is listening again on port %d, %.1f s after it died", service.name, port, time.monotonic() - died_at
        )
        self.write_info()

    def write_info(self) -> None:
        """``stack.json``: where everything is and the processes running now."""
        if self.info:
            self.info["pids"] = {name: p.pid for name, p in self.processes}
            self.info["restarts"] = {s.name: s.restarts for s in self.services}
            (self.run_dir / "stack.json").write_text(json.dumps(self.info))

    def _port(self, name: str, configured: int) -> str:
        return "0" if self.ephemeral else str(configured)

    async def start(self) -> dict[str, object]:
        s = self.settings
        host = s.grpc_host
        # Context and retrieval depend on nothing else here: both start at once (on two cores,
        # the stack is up one interpreter start sooner).
        context = self._launch(
            "context", "services.context", {"KB_CONTEXT_PORT": self._port("context", s.context_port)}
        )
        retrieval = self._launch(
            "retrieval", "services.retrieval", {"KB_RETRIEVAL_PORT": self._port("retrieval", s.retrieval_port)}
        )
        context_port, retrieval_port = self._listening(context), self._listening(retrieval)
        context_target = s.context_target or f"{host}:{context_port}"
        retrieval_target = s.retrieval_target or f"{host}:{retrieval_port}"
        credential = service_credential(s)
        await asyncio.gather(_wait_serving(context_target, credential), _wait_serving(retrieval_target, credential))
        chat_port = self._start(
            "chat",
            "services.chat",
            {
                "KB_CHAT_PORT": self._port("chat", s.chat_port),
                "KB_CONTEXT_TARGET": context_target,
                "KB_RETRIEVAL_TARGET": retrieval_target,
            },
        )
        chat_target = s.chat_target or f"{host}:{chat_port}"
        await _wait_serving(chat_target, credential)
        http_port = self._start(
            "gateway",
            "gateway",
            {
                "KB_HTTP_PORT": self._port("gateway", s.http_port),
                "KB_CHAT_TARGET": chat_target,
                "KB_RETRIEVAL_TARGET": retrieval_target,
            },
        )
        return {
            "url": local_url(s, http_port),
            "context_target": context_target,
            "retrieval_target": retrieval_target,
            "chat_target": chat_target,
            "metrics": {**self.metrics, "gateway": f"{local_url(s, http_port)}/metrics"} if s.metrics else {},
            "pids": {name: p.pid for name, p in self.processes},
        }

    def stop(self) -> bool:
        """SIGTERM every process, newest first; True when each one exited cleanly."""
        self.supervisor.stop()
        for _, process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for name, process in reversed(self.processes):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop in time; killing it", name)
                process.kill()
                process.wait()
        clean = True
        for name, process in self.processes:
            if process.returncode != 0:
                log.warning("%s exited with code %s", name, process.returncode)
                clean = False
        return clean


async def _first_admin_code(settings: Settings) -> str | None:
    """On a deployment's first start, the one-time sign-in code of its new user ``admin``; None
    once it has a user (docs/access.md, People and roles)."""
    engine = create_engine(settings.resolved_database_url())
    try:
        return await ensure_first_admin(session_factory(engine), settings)
    finally:
        await engine.dispose()


def _signin_lines(settings: Settings, url: str, code: str | None) -> str:
    """Where the operator page is and how to sign in to it (at ``KB_PUBLIC_URL`` when set, else
    at ``url``, where the gateway listens); the development switch's warning."""
    url = public_url(settings, url)
    minutes = f"{settings.signin_link_minutes:g}"
    if code:
        lines = [
            f"  Operator page · 管理页面: sign in as admin with this link (once, within {minutes} minutes;",
            "  the page then asks for a password) · 用此链接以 admin 登录（仅一次有效，随后设置密码）:",
            f"    {signin_url(url, code)}",
        ]
    else:
        lines = [
            f"  Operator page · 管理页面: {url}/ui/admin",
            "  A new one-time sign-in link for admin · 新的一次性登录链接: python -m tools.signin_link",
        ]
    if settings.dev_loopback_operator:
        lines.append(
            "  ! KB_DEV_LOOPBACK_OPERATOR is on: any caller on this machine without a token is the operator"
            " (development only) · 开发模式：本机无令牌的请求均为管理员"
        )
    return "\n".join(lines) + "\n"


def _token_line(settings: Settings) -> str:
    """The shell line that puts the operator token in $TOKEN, without printing it."""
    if settings.admin_token:
        return "TOKEN=$KB_ADMIN_TOKEN"
    return f"TOKEN=$(cat {shlex.quote(str(settings.data_dir / LOCAL_TOKEN_FILE))})"


def banner(info: dict[str, object], settings: Settings, code: str | None) -> str:
    url, app = str(info["url"]), info["application_id"]
    question = "云岭县人民医院ICU每天的探视时间是几点到几点？城乡居民医保参保人在县级定点医院住院，报销比例是多少？"
    if settings.dev_loopback_operator:
        chat = f"  Chat page · 对话页面: {url}/ui/chat/{app}"
    else:
        chat = "  Chat page · 对话页面: on the operator page, 应用 → 生成分享链接, then open the link"
    docs = f"API docs: {url}/docs   ·   " if settings.http_docs else ""
    return f"""
  Knowledge-base chat is running at {url}
  Demo application: {app}  (sample knowledge base: {info["documents"]} documents)

{_signin_lines(settings, url, code)}{chat}

  Try it (as the operator):
    {_token_line(settings)}
    CHAT=$(curl -s -H "Authorization: Bearer $TOKEN" {url}/api/application/{app}/chat/open | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"])')
    curl -N -X POST {url}/api/application/chat_message/$CHAT -H "Authorization: Bearer $TOKEN" \\
         -H 'Content-Type: application/json' -d '{{"message": "{question}"}}'

  {docs}Ctrl-C stops everything
"""


async def run(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    public_url(settings)  # an unreadable KB_PUBLIC_URL stops the start before anything runs
    upgrade(settings.resolved_database_url())
    run_dir = Path(settings.run_dir or tempfile.mkdtemp(prefix="kb-stack-"))
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in run_dir.glob("*.port"):
        stale.unlink()
    stack = Stack(settings, run_dir, args.ephemeral)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        info = await stack.start()
        if not args.no_seed:
            log.info("loading the documents of %s (embedding takes a few seconds the first time)", args.documents)
            ids = persisted_demo_ids(settings.data_dir)
            targets = str(info["retrieval_target"]), str(info["chat_target"])
            credential = service_credential(settings)
            seeded = await seed_demo(
                *targets, operator_token(settings), credential=credential, ids=ids, docs=args.documents
            )
            info.update(application_id=seeded.application_id, dataset_id=seeded.dataset_id, documents=seeded.documents)
        code = await _first_admin_code(settings)
        if args.no_seed:
            sys.stdout.write(_signin_lines(settings, str(info["url"]), code))
        else:
            sys.stdout.write(banner(info, settings, code))
        sys.stdout.flush()
        stack.info = info
        stack.write_info()  # after the banner: a stack.json on disk means it is printed
        stack.supervise()
        await stopping.wait()
        return 0 if stack.stop() else 1
    except (RuntimeError, grpc.aio.AioRpcError) as exc:
        log.error("the stack did not start: %s", exc)
        stack.stop()
        return 1
    except BaseException:
        stack.stop()
        raise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ephemeral", action="store_true", help="bind every process to a free port")
    parser.add_argument("--no-seed", action="store_true", help="do not load the sample knowledge base")
    parser.add_argument(
        "--documents",
        type=Path,
        default=SAMPLE_DOCS,
        metavar="FOLDER",
        help="the Markdown files the demo dataset is loaded from (default: the sample knowledge base)",
    )
    args = parser.parse_args()
    if not args.documents.is_dir() or not any(args.documents.glob("*.md")):
        parser.error(f"--documents: {args.documents} is not a folder holding Markdown files")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        sys.exit(asyncio.run(run(args)))
    except SettingsError as exc:
        parser.exit(2, f"error: {exc}\n")


if __name__ == "__main__":
    main()
