"""Split rules: their bounds refused with a sentence, kept as JSON, and applied by the splitter
to every format's structured form alike."""

from __future__ import annotations

import pytest

from kbcore.errors import InvalidRequest
from services.retrieval.ingestion.split_rules import DEFAULT_RULES, SplitRules
from services.retrieval.ingestion.splitter import Block, Heading, Table, Text, split_blocks


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (SplitRules(max_length=0), "max_length must be between 50 and 10000"),
        (SplitRules(max_length=10**9), "max_length must be between 50 and 10000"),
        (SplitRules(separators=("",)), "a separator must have 1 to 20 characters"),
        (SplitRules(separators=("x" * 21,)), "a separator must have 1 to 20 characters"),
        (SplitRules(separators=(" ",)), "only spaces"),
        (SplitRules(separators=tuple("abcdefghijk")), "at most 10 separators"),
        (SplitRules(max_length=100, overlap=51), "overlap must be between 0 and half of max_length (50)"),
        (SplitRules(title_levels=0), "title_levels must be between 1 and 6"),
        (SplitRules(title_levels=7), "title_levels must be between 1 and 6"),
    ],
)
def test_rules_out_of_bounds_are_refused_with_a_sentence(rules: SplitRules, said: str) -> None:
    with pytest.raises(InvalidRequest, match=said.replace("(", r"\(").replace(")", r"\)")):
        rules.checked()


def test_rules_are_kept_as_json() -> None:
    rules = SplitRules(max_length=300, separators=("\n\n", "。"), overlap=20, title_levels=2, keep_tables=True)
    assert SplitRules.from_json(rules.checked().to_json()) == rules
    assert SplitRules.from_json("") == DEFAULT_RULES


BLOCKS: list[Block] = [
    Heading("总则", 1),
    Text("第一条 适用范围。第二条 基本原则。第三条 管理部门"),
    Heading("细则", 3),
    Text("甲" * 130),
    Table((("项目", "标准"), *((f"项目{i}", "每人每天100元") for i in range(12)))),
]


def test_separators_start_a_paragraph_and_stay_with_the_text_they_end() -> None:
    paragraphs = split_blocks(BLOCKS[:2], rules=SplitRules(separators=("。",)))
    assert [p.content for p in paragraphs] == ["第一条 适用范围。", "第二条 基本原则。", "第三条 管理部门"]
    unsplit = split_blocks(BLOCKS[:2], rules=SplitRules(separators=("；",)))
    assert [p.content for p in unsplit] == ["第一条 适用范围。第二条 基本原则。第三条 管理部门"]


def test_a_cut_piece_repeats_the_end_of_the_one_before_within_the_maximum() -> None:
    paragraphs = split_blocks(BLOCKS[2:4], rules=SplitRules(max_length=50, overlap=10))
    pieces = [p.content for p in paragraphs if p.content.startswith("甲")]
    assert [len(p) for p in pieces] == [40, 50, 50, 20] and all(len(p) <= 50 for p in pieces)
    assert "".join(p[10:] if i else p for i, p in enumerate(pieces)) == "甲" * 130


def test_headings_deeper_than_the_title_levels_stay_in_the_text() -> None:
    deep = split_blocks(BLOCKS[:4], rules=SplitRules(title_levels=3))
    shallow = split_blocks(BLOCKS[:4], rules=SplitRules(title_levels=2))
    assert {p.title for p in deep if p.content.startswith("甲")} == {"细则"}
    assert "细则" in [p.content for p in shallow] and {p.title for p in shallow} == {"总则"}


def test_a_table_kept_whole_is_one_paragraph_else_it_is_cut_by_rows_under_its_header() -> None:
    whole = split_blocks(BLOCKS[4:], rules=SplitRules(max_length=100, keep_tables=True))
    cut = split_blocks(BLOCKS[4:], rules=SplitRules(max_length=100))
    assert len(whole) == 1 and whole[0].content.count("每人每天100元") == 12
    assert len(cut) > 1 and all(p.content.startswith("| 项目 | 标准 |") for p in cut)
