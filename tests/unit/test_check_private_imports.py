"""The private-names lint passes on the project's product code and catches each kind of reach
into a library's or another class's insides, while letting a class's own, a module's own and
documented underscored names be."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_private_imports.py"

BAD = """
import sys

import httpx2._exceptions
from openai._models import FinalRequestOptions
from openai import _legacy_response
import openai
import openai as sdk

from services.retrieval.store.qdrant_server import QdrantServerStore


class Post:
    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client
        self._http = client._client

    async def send(self, response: object) -> object:
        if self._client._should_retry(response):
            return sdk._base_client.SyncHttpxClientWrapper
        return getattr(openai, "_exceptions")


def sibling(store: QdrantServerStore, paragraph: object) -> object:
    sys._getframe()
    return store._client, paragraph._p, getattr(store, "_collection")
"""

GOOD = """
import collections
import os

import openai

from kbcore.models import _helpers
from services.retrieval.store.qdrant_server import QdrantServerStore
from . import _local


class Store:
    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client

    @classmethod
    def open(cls, client: openai.AsyncOpenAI) -> Store:
        store = cls(client)
        store._client.timeout = 1
        return store

    def sibling(self, other: QdrantServerStore, peer: Store) -> object:
        return peer._client, self._client, super()._client, Store._client, openai.__version__, other.collection


Point = collections.namedtuple("Point", "x y")


def leave(point: Point) -> None:
    _helper(point._replace(x=1)._asdict(), Point._fields)
    os._exit(0)


def _helper(*values: object) -> None:
    pass
"""


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False)


def test_the_product_code_uses_only_public_names() -> None:
    result = run(ROOT)
    assert result.returncode == 0, result.stdout


def test_each_kind_of_private_use_is_reported(tmp_path: Path) -> None:
    (tmp_path / "kbcore").mkdir()
    (tmp_path / "kbcore" / "bad.py").write_text(BAD)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_bad.py").write_text(BAD)  # tests are not product code
    result = run(tmp_path)
    assert result.returncode == 1
    reported = [line.split(" ", 1)[1] for line in result.stdout.splitlines() if line.startswith("kbcore/bad.py:")]
    assert reported == [
        "import httpx2._exceptions",
        "from openai._models import ...",
        "from openai import _legacy_response",
        "client._client",
        "self._client._should_retry",
        "sdk._base_client.SyncHttpxClientWrapper",
        "getattr(openai, '_exceptions')",
        "sys._getframe",
        "getattr(store, '_collection')",
        "paragraph._p",
        "store._client",
    ]
    assert "tests/" not in result.stdout


def test_own_and_standard_library_names_and_a_marked_shim_pass(tmp_path: Path) -> None:
    (tmp_path / "services").mkdir()
    (tmp_path / "services" / "good.py").write_text(GOOD)
    (tmp_path / "services" / "shim.py").write_text(
        "import httpx2\nhttpx2._config.DEFAULT  # private-ok: worked around upstream, see the docstring\n"
    )
    result = run(tmp_path)
    assert result.returncode == 0, result.stdout
