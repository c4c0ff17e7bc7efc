"""Follow-up queries by example, for parts that ask the same thing of parallel documents.

"白石和青禾今年各留了多少请吃饭的钱？" splits into one part per township. Worded colloquially,
the 青禾 part often fails to retrieve its answer while the 白石 part finds its own: the two
townships' budget reports are written alike, so the paragraph that came nearest for 白石,
with 白石镇 replaced by 青禾乡 (and its amounts left out), is the best description there is of
the paragraph 青禾 needs. It is tried after the part's own wording has been searched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kbcore.models.base import EvidenceParagraph, PartSupport
from kbcore.models.offline.terms import leading_name

EXAMPLE_CHARS = 300  # a follow-up query is clipped to 500 characters; an example needs less
_ADMIN = "[县乡镇市区省村]"
_AMOUNT = re.compile(r"(?<![\d.])(?!(?:19|20)\d{2}年)\d+(?:\.\d+)?")


def _full_name(name: str, evidence: Sequence[EvidenceParagraph]) -> str:
    """``name`` as the evidence writes it: 青禾 → 青禾乡 when a document says 青禾乡."""
    pattern = re.compile(re.escape(name) + _ADMIN)
    for paragraph in evidence:
        found = pattern.search(f"{paragraph.document_name}\n{paragraph.content}")
        if found:
            return found.group(0)
    return name


def sibling(part: str, name: str, supports: Sequence[PartSupport]) -> tuple[PartSupport, str] | None:
    """Another part that asks the same as ``part`` of another subject, and that subject's name."""
    for other in supports:
        other_name = leading_name(other.part)
        if other.part == part or not other_name or other_name == name or not other.quotes:
            continue
        if part.startswith(other.part.replace(other_name, name, 1).rstrip("？?。")):
            return other, other_name
    return None


def query_by_example(part: str, supports: Sequence[PartSupport], evidence: Sequence[EvidenceParagraph]) -> str:
    """The sibling part's nearest paragraph rewritten for this part's subject; "" when ``part``
    has no sibling (no other part asks the same of another subject)."""
    name = leading_name(part)
    found = sibling(part, name, supports) if name else None
    if found is None:
        return ""
    other, sibling_name = found
    example = next((p for p in evidence if p.id == other.quotes[0].paragraph_id), None)
    if example is None:
        return ""
    old, new = _full_name(sibling_name, evidence), _full_name(name, evidence)
    # The sibling's amounts go: the query shows in the trace, and must not read as a claim
    # about this subject ("白石镇…合计9.80万元"); years stay, they date both documents alike.
    return _AMOUNT.sub("", example.content.replace(old, new))[:EXAMPLE_CHARS]
