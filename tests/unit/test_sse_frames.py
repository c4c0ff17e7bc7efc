"""The gateway's precomputed answer-chunk frames are the frames ``sse_wire.chunk`` writes, byte for byte."""

from __future__ import annotations

import pytest

from gateway import sse_wire


@pytest.mark.parametrize(
    "content",
    ["", "abc", "第一段：依据检索资料作答。", 'a "quote" and \\ backslash', "line\nbreak\u2028", "\x00", "😀"],
)
def test_chunk_frames_equal_chunk(content: str) -> None:
    frames = sse_wire.ChunkFrames("449c8f0e-6a9b-4c1e-9d7a-2f0b5d1e8a33", "17")
    assert frames(content) == sse_wire.chunk("449c8f0e-6a9b-4c1e-9d7a-2f0b5d1e8a33", "17", content, is_end=False)
