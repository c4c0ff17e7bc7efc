"""Debian's nginx as the reverse proxy in front of a test's gateway, configured as
docs/operations.md ("Behind a reverse proxy") tells an operator to, and run by the test itself:
a child process in the foreground (``daemon off``) with its own prefix folder, configuration,
pid file, temporary folders and error log, on a free loopback port, stopped at the end. It
never touches the system's nginx (``/etc/nginx``, port 80, ``/run/nginx.pid``). ``make test``
installs the binary (``scripts/test-deps.sh``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.eventually import eventually

NGINX = Path("/usr/sbin/nginx")
HOST = "127.0.0.1"

# The operator's server block of docs/operations.md, without TLS and the limits that a test's
# burst of requests from one address would meet.
CONFIG = """\
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    client_max_body_size 51m;
    server {{
        listen {host}:{port};
        location / {{
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
            proxy_read_timeout 660s;
        }}
    }}
}}
"""


@dataclass(frozen=True)
class NginxProxy:
    url: str
    error_log: Path

    def errors(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""


def free_port() -> int:
    """A loopback port nothing listens on now, for nginx to bind next: nginx cannot be given a
    socket, so there is a moment in which another process could take it (then nginx says so in
    its error log and the start fails loudly, never silently proxying elsewhere)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _prefix() -> Path:
    # Readable by nginx's worker, which runs as ``nobody`` when the tests run as root.
    folder = Path(tempfile.mkdtemp(prefix="kb-nginx-"))
    folder.chmod(0o755)
    return folder


async def _accepting(process: subprocess.Popen[bytes], port: int, error_log: Path) -> bool:
    if process.poll() is not None:
        log = error_log.read_text(errors="replace") if error_log.exists() else ""
        # Not an AssertionError, which ``eventually`` would take for "not yet": it ends the wait.
        raise RuntimeError(f"nginx exited with {process.returncode} at start: {log}")
    try:
        _, writer = await asyncio.open_connection(HOST, port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


async def _stop(process: subprocess.Popen[bytes]) -> None:
    """A fast shutdown (SIGTERM to the master, which ends its worker), then a kill if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 10)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)


@contextlib.asynccontextmanager
async def nginx_in_front_of(upstream: str) -> AsyncIterator[NginxProxy]:
    """nginx proxying to ``upstream`` (``http://127.0.0.1:<port>``) until the block ends."""
    if not os.access(NGINX, os.X_OK):
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (make test does: scripts/test-deps.sh)")
    prefix, port = _prefix(), free_port()
    error_log = prefix / "error.log"
    conf = prefix / "nginx.conf"
    conf.write_text(CONFIG.format(prefix=prefix, host=HOST, port=port, upstream=upstream))
    # -e: the error log from the first line on (before the configuration names it, nginx would
    # open the system's); -p: relative paths resolve in the prefix, not /usr/share/nginx.
    command = [str(NGINX), "-p", str(prefix), "-c", str(conf), "-e", str(error_log)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await eventually(lambda: _accepting(process, port, error_log), timeout=30, what="nginx accepting")
        yield NginxProxy(f"http://{HOST}:{port}", error_log)
    finally:
        await _stop(process)
        shutil.rmtree(prefix, ignore_errors=True)
