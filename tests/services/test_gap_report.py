"""The knowledge-gap report and "improve this answer".

The report is checked on the dev set against a knowledge base holding half the sample documents:
the questions whose evidence is in the removed half (and a few answerable ones) are asked through
the offline stack, and the report's top groups must name the removed documents' topics and none
of the present ones'. GroupTexts (the grouping next to the embedder) is checked on its own: real
gaps of one document land together, bounds are refused. ImproveRecord writes a paragraph that the
same question finds at once, links it to the record, and refuses a deleted dataset and a record
of another application with NOT_FOUND.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import select

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.db.tables import ChatRecord
from kbcore.rpc.caller_token import bearer, operator_token
from services.chat.admin.improvements import IMPROVED_DOCUMENT
from tests.grpc_status import status_of
from tests.process_stack import sample_documents
from tools.demo_ids import DemoIds
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID, SAMPLE_DOCS, seed_demo

REPO = Path(__file__).resolve().parents[2]
QUESTION_FILES = (REPO / "samples/kb/questions.jsonl", REPO / "samples/kb/questions-hard.jsonl")
DOCUMENTS = sorted(p.name for p in SAMPLE_DOCS.glob("*.md"))
PRESENT = DOCUMENTS[0::2]
REMOVED = DOCUMENTS[1::2]
# What a gap about each document names: the document's subject, in the words its questions use.
TOPICS = {
    "chengfeng_ap360_manual.md": ("澄风", "净化器"),
    "qinghe_budget_2026.md": ("青禾",),
    "xinglan_expense_policy.md": ("星澜", "报销", "出差"),
    "xinglan_leave_policy.md": ("星澜", "假"),
    "yunling_hospital_visiting_rules.md": ("医院", "探视", "陪护", "陪床"),
    "yunling_library_rules.md": ("图书馆",),
    "yunling_resident_medical_insurance.md": ("医保", "大病保险"),
    "yunling_water_tariff.md": ("自来水", "水价", "水费", "用水"),
    "baishi_budget_2026.md": ("白石",),
    "chicheng_e5_ebike_manual.md": ("驰骋", "电动自行车"),
    "qinghe_elderly_allowance.md": ("高龄津贴",),
    "xinglan_it_security.md": ("密码", "信息安全"),
    "yunling_admin_license_rules.md": ("行政许可",),
    "yunling_info_disclosure_rules.md": ("信息公开",),
    "yunling_parking_fee_rules.md": ("停车",),
    "yunling_shiyan_primary_enrollment_2026.md": ("实验小学",),
}
TOP_GROUPS = 5


def single_turn_cases() -> list[dict[str, Any]]:
    cases = [json.loads(line) for path in QUESTION_FILES for line in path.read_text(encoding="utf-8").splitlines()]
    return [c for c in cases if len(c["turns"]) == 1 and c["turns"][0]["gold"]]


def gold_docs(case: dict[str, Any]) -> set[str]:
    return {g["doc"] for g in case["turns"][0]["gold"]}


def named_documents(text: str) -> set[str]:
    return {doc for doc, words in TOPICS.items() if any(word in text for word in words)}


async def ask(chat, operator, application_id: str, question: str) -> chat_pb.AskDone:
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=operator)
    request = chat_pb.AskRequest(chat_id=opened.chat_id, message=question)
    events = [event async for event in chat.answers.Ask(request, metadata=operator)]
    assert events[-1].WhichOneof("event") == "done", events[-3:]
    done: chat_pb.AskDone = events[-1].done
    return done


async def new_application(chat, operator, name: str, datasets: list[str]) -> str:
    created = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(application=chat_pb.Application(name=name, dataset_ids=datasets)),
        metadata=operator,
    )
    return str(created.application.id)


@pytest.fixture
async def half_knowledge_base(stack, tmp_path: Path) -> DemoIds:
    """An application over a dataset holding every other sample document (the even ones)."""
    docs = sample_documents(tmp_path / "half", PRESENT)
    ids = DemoIds(str(uuid.uuid4()), str(uuid.uuid4()))
    operator, credential = operator_token(stack.settings), stack.credential
    await seed_demo(stack.retrieval_target, stack.chat_target, operator, credential=credential, ids=ids, docs=docs)
    return ids


async def test_gap_report_with_half_the_documents_removed_names_the_removed_ones(
    chat, operator, half_knowledge_base: DemoIds
) -> None:
    cases = single_turn_cases()
    unanswerable = [c for c in cases if gold_docs(c) <= set(REMOVED)]
    answerable = [c for c in cases if gold_docs(c) <= set(PRESENT)][:5]
    assert len(unanswerable) >= 15 and len(answerable) == 5
    application_id = half_knowledge_base.application_id
    for case in unanswerable + answerable:
        await ask(chat, operator, application_id, case["turns"][0]["question"])

    report = await chat.operations.GapReport(chat_pb.GapReportRequest(application_id=application_id), metadata=operator)
    asked_gaps = {c["turns"][0]["question"] for c in unanswerable}
    # The offline assessment calls a few of them sufficient on evidence from a neighbouring
    # document (3 on one machine, 4 on another with the same code: dev-c12, dev-u01, dev-u03, dh-s04).
    assert report.records >= 0.75 * len(unanswerable), "most questions about removed documents are gaps"
    assert report.groups and len(report.groups) >= TOP_GROUPS
    counts = [g.count for g in report.groups]
    assert counts == sorted(counts, reverse=True) and counts[0] >= 3
    named: set[str] = set()
    for group in report.groups[:TOP_GROUPS]:
        assert group.gaps, group
        for gap in group.gaps:
            documents = named_documents(gap)
            assert documents & set(REMOVED), f"gap {gap!r} of group {group.label!r} names no removed document"
            assert not documents & set(PRESENT), f"gap {gap!r} names a document the knowledge base holds"
            named |= documents & set(REMOVED)
        assert {e.question for e in group.examples} <= asked_gaps, "only unanswerable questions are examples"
        assert len({e.record_id for e in group.examples}) == len(group.examples) <= group.count
    assert len(named) >= 5, f"the top groups name only {sorted(named)}"


async def test_the_report_links_to_records_and_reads_details_when_the_column_is_empty(
    chat, operator, sessions, unique
) -> None:
    application_id = await new_application(chat, operator, f"缺口-{unique}", [DEMO_DATASET_ID])
    done = await ask(chat, operator, application_id, "云岭县的公园几点关门？澄风AP-360的滤网多久换一次？")
    assert not done.sufficient
    async with sessions.begin() as session:  # as a record saved before the column existed
        record = await session.get(ChatRecord, int(done.record_id))
        record.sufficient = None

    report = await chat.operations.GapReport(chat_pb.GapReportRequest(application_id=application_id), metadata=operator)
    assert report.records == 1
    [example] = [e for g in report.groups for e in g.examples][:1]
    assert example.record_id == done.record_id
    assert "公园" in " ".join(g.label + "".join(g.gaps) for g in report.groups)
    fetched = await chat.answers.GetRecord(
        chat_pb.GetRecordRequest(chat_id=example.chat_id, record_id=example.record_id), metadata=operator
    )
    assert fetched.record.question == example.question


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ({"max_groups": 201}, grpc.StatusCode.INVALID_ARGUMENT, "max_groups"),
        ({"max_groups": -1}, grpc.StatusCode.INVALID_ARGUMENT, "max_groups"),
        ({"date_from": "2026-03-02", "date_to": "2026-03-01"}, grpc.StatusCode.INVALID_ARGUMENT, "after"),
        ({"date_from": "2000-01-01", "date_to": "2026-01-01"}, grpc.StatusCode.INVALID_ARGUMENT, "at most"),
        ({"date_from": "yesterday"}, grpc.StatusCode.INVALID_ARGUMENT, "YYYY-MM-DD"),
        ({"application_id": "no-such-application"}, grpc.StatusCode.NOT_FOUND, "no-such-application"),
    ],
)
async def test_bad_gap_report_requests_are_refused_in_words(chat, operator, fields, code, words) -> None:
    request = chat_pb.GapReportRequest(**{"application_id": DEMO_APPLICATION_ID, **fields})
    got, message = await status_of(chat.operations.GapReport(request, metadata=operator))
    assert got == code and words in message, message


async def test_only_the_operator_reads_the_gap_report_or_improves(chat, operator) -> None:
    key = await chat.access.CreateApiKey(
        chat_pb.CreateApiKeyRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    report = await status_of(
        chat.operations.GapReport(
            chat_pb.GapReportRequest(application_id=DEMO_APPLICATION_ID), metadata=bearer(key.key)
        )
    )
    assert report[0] == grpc.StatusCode.PERMISSION_DENIED
    improve = await status_of(
        chat.operations.ImproveRecord(
            chat_pb.ImproveRecordRequest(application_id=DEMO_APPLICATION_ID, chat_id="x", record_id="1", answer="a"),
            metadata=bearer(key.key),
        )
    )
    assert improve[0] == grpc.StatusCode.PERMISSION_DENIED


# --- GroupTexts ---------------------------------------------------------------------------------

LIBRARY = ["县图书馆成人读者证的借期是多少天", "云岭县图书馆的图书可以续借几次", "借县图书馆的书给弄丢了，要赔多少"]
HOSPITAL = [
    "云岭县人民医院ICU每天的探视时间是几点到几点",
    "云岭县人民医院的陪护床每晚收费多少",
    "在县医院陪床想租张折叠床睡，押金要多少",
]
PURIFIER = ["澄风AP-360空气净化器开睡眠档时噪声不超过多少分贝", "澄风净化器屏幕上冒出个E2，咋办"]


async def test_group_texts_puts_the_gaps_of_one_document_together(retrieval) -> None:
    texts = [LIBRARY[0], HOSPITAL[0], PURIFIER[0], LIBRARY[1], "", HOSPITAL[1], PURIFIER[1], LIBRARY[2], HOSPITAL[2]]
    response = await retrieval.search.GroupTexts(retrieval_pb.GroupTextsRequest(texts=texts))
    members = [sorted(g.members) for g in response.groups]
    assert sorted(i for m in members for i in m) == list(range(len(texts))), "every text in exactly one group"
    by_topic = {tuple(sorted(texts.index(t) for t in topic)) for topic in (LIBRARY, HOSPITAL, PURIFIER)}
    assert by_topic <= {tuple(m) for m in members}, members
    assert [4] in members, "a blank text stays alone"
    for group in response.groups:
        assert group.central in group.members
    assert [len(m) for m in members] == sorted((len(m) for m in members), reverse=True)


@pytest.mark.parametrize(
    ("texts", "words"),
    [([], "at least one"), (["问"] * 2001, "at most 2000"), (["问", "长" * 501], "longer than 500")],
)
async def test_group_texts_refuses_what_it_cannot_bound(retrieval, texts, words) -> None:
    code, message = await status_of(retrieval.search.GroupTexts(retrieval_pb.GroupTextsRequest(texts=texts)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message, message


# --- ImproveRecord ------------------------------------------------------------------------------

IMPROVED_QUESTION = "云岭县城市公园冬季几点闭园？"
IMPROVED_ANSWER = "云岭县城市公园冬季（11月至次年3月）每日18:30闭园，19:00后园内照明关闭。"


async def test_an_improvement_is_searchable_at_once_and_linked_to_its_record(
    chat, retrieval, operator, sessions, unique
) -> None:
    dataset = await retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name=f"改进-{unique}"))
    dataset_id = dataset.dataset.id
    application_id = await new_application(chat, operator, f"改进-{unique}", [dataset_id])
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=operator)
    events = [
        e
        async for e in chat.answers.Ask(
            chat_pb.AskRequest(chat_id=opened.chat_id, message=IMPROVED_QUESTION), metadata=operator
        )
    ]
    record_id = events[-1].done.record_id
    assert not events[-1].done.sources

    improved = []
    for answer in (IMPROVED_ANSWER, IMPROVED_ANSWER + "节假日延长至20:00。"):
        improved.append(
            await chat.operations.ImproveRecord(
                chat_pb.ImproveRecordRequest(
                    application_id=application_id,
                    chat_id=opened.chat_id,
                    record_id=record_id,
                    dataset_id=dataset_id,
                    answer=answer,
                ),
                metadata=operator,
            )
        )
    first, second = improved
    assert first.document_id == second.document_id and first.paragraph_id != second.paragraph_id
    documents = await retrieval.documents.ListDocuments(retrieval_pb.ListDocumentsRequest(dataset_id=dataset_id))
    assert [d.name for d in documents.documents] == [IMPROVED_DOCUMENT]
    paragraphs = await retrieval.paragraphs.ListParagraphs(
        retrieval_pb.ListParagraphsRequest(dataset_id=dataset_id, document_id=first.document_id, page=1, page_size=10)
    )
    assert (paragraphs.paragraphs[0].title, paragraphs.paragraphs[0].content) == (IMPROVED_QUESTION, IMPROVED_ANSWER)

    search = await retrieval.search.Search(
        retrieval_pb.SearchRequest(
            dataset_ids=[dataset_id],
            query=IMPROVED_QUESTION,
            search=common_pb2.SearchSettings(top_n=3, search_mode=common_pb2.SEARCH_MODE_HYBRID),
        )
    )
    assert first.paragraph_id in [p.id for p in search.paragraphs]
    again = await ask(chat, operator, application_id, IMPROVED_QUESTION)
    assert first.paragraph_id in [s.id for s in again.sources]
    async with sessions() as session:
        row = (await session.scalars(select(ChatRecord).where(ChatRecord.id == int(record_id)))).one()
    assert row.improved_paragraph_ids == [first.paragraph_id, second.paragraph_id]


async def test_improvements_into_a_missing_dataset_or_another_applications_record_are_not_found(
    chat, retrieval, operator, sessions, unique
) -> None:
    dataset = await retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name=f"将删-{unique}"))
    application_id = await new_application(chat, operator, f"改进-{unique}", [DEMO_DATASET_ID])
    other_id = await new_application(chat, operator, f"别的-{unique}", [DEMO_DATASET_ID])
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=operator)
    events = [
        e
        async for e in chat.answers.Ask(
            chat_pb.AskRequest(chat_id=opened.chat_id, message="年假几天？"), metadata=operator
        )
    ]
    record_id = events[-1].done.record_id
    await retrieval.datasets.DeleteDataset(retrieval_pb.DeleteDatasetRequest(dataset_id=dataset.dataset.id))

    def request(**fields: str) -> chat_pb.ImproveRecordRequest:
        base = {"application_id": application_id, "chat_id": opened.chat_id, "record_id": record_id}
        return chat_pb.ImproveRecordRequest(**{**base, "dataset_id": DEMO_DATASET_ID, "answer": "十天。", **fields})

    refused = [
        (request(dataset_id=dataset.dataset.id), grpc.StatusCode.NOT_FOUND, "deleted"),
        (request(dataset_id="no-such-dataset"), grpc.StatusCode.NOT_FOUND, "does not exist"),
        (request(application_id=other_id), grpc.StatusCode.NOT_FOUND, "does not exist"),
        (request(record_id="999999999"), grpc.StatusCode.NOT_FOUND, "does not exist"),
        (request(record_id="abc"), grpc.StatusCode.INVALID_ARGUMENT, "record_id"),
        (request(answer="  "), grpc.StatusCode.INVALID_ARGUMENT, "answer"),
        (request(answer="长" * 5000), grpc.StatusCode.INVALID_ARGUMENT, "longer than"),
        (request(question="问" * 300), grpc.StatusCode.INVALID_ARGUMENT, "question"),
        (request(dataset_id=""), grpc.StatusCode.INVALID_ARGUMENT, "dataset_id"),
    ]
    for bad, code, words in refused:
        got, message = await status_of(chat.operations.ImproveRecord(bad, metadata=operator))
        assert (got, words in message) == (code, True), (bad, message)
    async with sessions() as session:
        row = (await session.scalars(select(ChatRecord).where(ChatRecord.id == int(record_id)))).one()
    assert not row.improved_paragraph_ids, "nothing was linked by a refused improvement"
