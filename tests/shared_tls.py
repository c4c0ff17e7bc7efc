"""One TLS context for every HTTP client the tests build.

httpx builds a new SSL context for each client it constructs, and loading the CA bundle into it
costs about 25 ms of CPU, although the suite's clients only speak plain HTTP to 127.0.0.1. The
suite builds thousands of clients (the permission matrix alone, one per request: 676), and
those loads were over a quarter of some modules' time. This is the context httpx would build
by default (``httpx.create_ssl_context()``), built once per process and given to every client
(``verify=TLS``), so nothing a test sees changes."""

from __future__ import annotations

import httpx

TLS = httpx.create_ssl_context()
