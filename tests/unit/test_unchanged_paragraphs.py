"""Which served paragraphs a new version of a document keeps: the same indexed text (document
name, title, content), one served point per new paragraph, in document order."""

from __future__ import annotations

from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.ingestion.unchanged import kept_paragraphs
from services.retrieval.store.base import StoredParagraph, Unchanged


def served(
    point_id: str, title: str, content: str, position: int, version: int = 3, name: str = "规程"
) -> StoredParagraph:
    return StoredParagraph(point_id, "ds", "doc", name, title, content, position, version, True)


def test_each_unchanged_text_keeps_one_served_point_in_document_order() -> None:
    points = [
        served("a", "总则", "甲", 0),
        served("b", "总则", "乙", 1),
        served("c", "附则", "乙", 2),  # the same content under another title: another indexed text
        served("d", "总则", "乙", 3),  # a repeated paragraph
    ]
    new = [
        SplitParagraph("总则", "新"),
        SplitParagraph("总则", "乙"),
        SplitParagraph("总则", "乙"),
        SplitParagraph("总则", "乙"),
        SplitParagraph("总则", "甲"),
    ]
    kept = kept_paragraphs(new, points, "规程", 4)
    assert {position: p.id for position, p in kept.by_position.items()} == {1: "b", 2: "d", 4: "a"}
    assert kept.unchanged() == Unchanged(ids=frozenset({"a", "b", "d"}), moved={"d": 2, "a": 4})


def test_a_renamed_document_keeps_nothing() -> None:
    """The document's name is part of what is embedded: under a new name every vector changes."""
    kept = kept_paragraphs([SplitParagraph("总则", "甲")], [served("a", "总则", "甲", 0, name="旧名")], "规程", 4)
    assert kept.by_position == {} and kept.unchanged() == Unchanged()


def test_points_already_of_the_new_version_come_first() -> None:
    """A resumed job finds what its first attempt kept or published as the new version."""
    points = [served("old", "", "甲", 0, version=3), served("new", "", "甲", 5, version=4)]
    kept = kept_paragraphs([SplitParagraph("", "甲"), SplitParagraph("", "甲")], points, "规程", 4)
    assert [kept.by_position[i].id for i in (0, 1)] == ["new", "old"]
