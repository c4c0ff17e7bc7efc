"""Where MaxKB's HTTP objects are filled in from the services' protos: a record with its trace,
a retrieval round, a paragraph, an evaluation's scores, and the application, dataset, document
and managed-paragraph objects, each built as its shape (``gateway.shapes``), which names its keys
and their order once; plus a progress payload and the export rows. Routes send a shape's
``wire()``; adding a field to the wire is the proto, the shape and its line here (plus the
page's JS when people should see it).

Spelling, rounding and which keys appear only when they happened are decided here; key order is
the shape's (the golden test holds both).
"""

from __future__ import annotations

from typing import Any, cast

from google.protobuf.message import Message

from gateway.errors import shown
from gateway.labels import progress_line
from gateway.progress_forms import progress_form
from gateway.shapes.answers import (
    AnswerCardOut,
    BlockAnswerOut,
    CaseScoreOut,
    ChatStepOut,
    ContextInfoOut,
    EvaluationOut,
    EvaluationSummaryOut,
    GapExampleOut,
    GapGroupOut,
    ImprovementOut,
    LogEntryOut,
    ParagraphOut,
    PartOut,
    PartVerdictName,
    RecordOut,
    RetrievalOut,
    RoundOut,
    RoundRecallOut,
    SearchStepOut,
    UsageDayOut,
    VoteOut,
    VoteStatus,
)
from gateway.shapes.applications import (
    AccessTokenOut,
    ApiKeyOut,
    ApplicationOut,
    ApplicationProfileOut,
    ChatSummaryOut,
    DatasetSettingOut,
    ModelOut,
    ModelSettingOut,
    ModelType,
    PageSettingOut,
    VisitorApplicationOut,
)
from gateway.shapes.audit_trail import AuditEventOut
from gateway.shapes.datasets import (
    DatasetOut,
    DetachedApplicationOut,
    DetachedOut,
    DocumentMetaOut,
    DocumentOut,
    EmbeddingSwitchOut,
    ManagedParagraphOut,
    ParagraphPageOut,
    ProgressOut,
    SourceCheckOut,
    SyncedDocumentOut,
    SyncOut,
    UploadRulesOut,
)
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.document_types import SUPPORTED_SUFFIXES, SUPPORTED_TYPES_SENTENCE
from kbcore.refusals.status_details import from_proto
from kbcore.vocabulary import (
    DOCUMENT_STATUS,
    EMBEDDING_SWITCH_STATE,
    LOG_SOURCE,
    PART_VERDICT,
    RECORD_SOURCE,
    RECORD_STATUS,
    SEARCH_MODE,
    STOP_REASON,
    SYNC_OUTCOME,
    VOTE,
    EnumNames,
)
from kbcore.words.language import DEFAULT_LANGUAGE, Language
from kbcore.words.said import UNRECOGNISED, Said

# MaxKB calls vector search "embedding" and hybrid "blend"; both spellings are accepted.
SEARCH_MODE_ALIASES = {"embedding": "vector", "blend": "hybrid"}
SEARCH_MODE_SPELLINGS = (*SEARCH_MODE.names, *SEARCH_MODE_ALIASES)
DEFAULT_SEARCH_MODE_NAME = "hybrid"
UNKNOWN_STATUS = "unknown"
# A saved failure (an answer's, a document's) has no HTTP status: one the catalogue has no words
# for reads as the service's own.
STORED_FAILURE_STATUS = 500
DEFAULT_SOURCE = RECORD_SOURCE.name(common_pb2.RECORD_SOURCE_CHAT)

EXPORT_COLUMNS = [
    "chat_id",
    "record_id",
    "create_time",
    "question",
    "rewritten_question",
    "answer",
    "status",
    "stop_reason",
    "sufficient",
    "missing",
    "rounds",
    "error",
    "source",
]

_ENUM_NAMES: dict[str, EnumNames[Any]] = {"kb.common.v1.StopReason": STOP_REASON}


def search_mode(spelling: str) -> common_pb2.SearchMode:
    """A search mode as the HTTP API spells it (ours or MaxKB's) → the proto value."""
    return SEARCH_MODE.value(SEARCH_MODE_ALIASES.get(spelling, spelling))


def progress_payload(progress: common_pb2.Progress) -> dict[str, Any]:
    """``{"phase": …}`` and the phase's own fields in proto order (enums by wire name)."""
    phase = progress.WhichOneof("phase") or "unknown"
    payload: dict[str, Any] = {"phase": phase}
    if phase != "unknown":
        payload.update(_plain(getattr(progress, phase)))
    return payload


def _plain(message: Message) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.enum_type is not None:
            value = _ENUM_NAMES[field.enum_type.full_name].name(value)
        elif field.is_repeated:
            value = list(value)
        values[field.name] = value
    return values


def paragraph_out(paragraph: common_pb2.Paragraph) -> ParagraphOut:
    """A paragraph as the HTTP API and the record details show it (MaxKB's ``similarity``), and
    its ``rerank_score`` only when a rerank model scored it (the wire without rerank is unchanged),
    its ``matched_question`` only when an attached question brought it in."""
    shown = ParagraphOut(
        id=paragraph.id,
        dataset_id=paragraph.dataset_id,
        document_id=paragraph.document_id,
        document_name=paragraph.document_name,
        title=paragraph.title,
        content=paragraph.content,
        similarity=round(paragraph.score, 4),
        round=paragraph.round,
        # What MaxKB's page shows with a source: the dataset's name, the paragraph as in use
        # (a card it shows greyed out otherwise), and the document's metadata (none kept yet).
        dataset_name=paragraph.dataset_name,
        is_active=True,
        meta={},
    )
    if paragraph.HasField("rerank_score"):
        shown.rerank_score = round(paragraph.rerank_score, 4)
    if paragraph.matched_question:
        shown.matched_question = paragraph.matched_question
    return shown


def round_out(trace: common_pb2.RoundTrace) -> RoundOut:
    """One retrieval round as the record details and the hit test show it;
    ``reranked``/``rerank_error`` only for an application with a rerank model."""
    shown = RoundOut(
        round=trace.round,
        queries=list(trace.queries),
        new_paragraph_ids=list(trace.new_paragraph_ids),
        total_evidence=trace.total_evidence,
        sufficient=trace.sufficient,
        missing=trace.missing,
        next_queries=list(trace.next_queries),
    )
    if trace.reranked or trace.rerank_error:
        shown.reranked, shown.rerank_error = trace.reranked, trace.rerank_error
    if trace.assessment_skipped:  # only when it happened: the round added nothing, no assessment was asked
        shown.assessment_skipped = True
    if trace.assessed_by:  # only when it happened: the local evidence judge decided, no model was asked
        shown.assessed_by = trace.assessed_by
    return shown


def retrieval_out(result: common_pb2.RetrievalResult) -> RetrievalOut:
    """The multi-round hit test's answer: the loop's rounds and evidence."""
    return RetrievalOut(
        problem_text=result.problem_text,
        rounds=[round_out(r) for r in result.rounds],
        stop_reason=STOP_REASON.name(result.stop_reason),
        sufficient=result.sufficient,
        missing=result.missing,
        run_time=round(result.run_time, 3),
        search_mode=SEARCH_MODE.name(result.search_mode),
        paragraph_list=[paragraph_out(p) for p in result.paragraphs],
    )


def evaluation_out(rewrite: bool, scored: retrieval_pb.EvaluateResponse) -> EvaluationOut:
    """The evaluation route's answer: whether follow-ups were rewritten, the summary, then
    every case in the order it was sent."""
    return EvaluationOut(
        rewrite=rewrite,
        summary=evaluation_summary_out(scored.summary),
        cases=[case_score_out(c) for c in scored.cases],
    )


def evaluation_summary_out(summary: retrieval_pb.EvalSummary) -> EvaluationSummaryOut:
    """Recall and all-gold cases after each round; rounds used (keyed by the number as a
    string, in string order) and stop reasons (by wire name, most frequent first)."""
    return EvaluationSummaryOut(
        cases=summary.cases,
        gold=summary.gold_total,
        by_round=[
            RoundRecallOut(round=r.round, recall=round(r.recall, 4), all_gold=r.all_gold) for r in summary.by_round
        ],
        rounds_used=dict(sorted((str(u.rounds), u.cases) for u in summary.rounds_used)),
        stop_reasons={STOP_REASON.name(s.stop_reason): s.cases for s in summary.stop_reasons},
    )


def case_score_out(score: retrieval_pb.CaseScore) -> CaseScoreOut:
    return CaseScoreOut(
        id=score.id,
        kind=score.kind,
        question=score.question,
        problem_text=score.problem_text,
        gold=score.gold_total,
        found_by_round=list(score.found_by_round),
        rounds_used=score.rounds_used,
        stop_reason=STOP_REASON.name(score.stop_reason),
    )


def record_out(record: chat_pb.ChatRecord, language: Language = DEFAULT_LANGUAGE) -> RecordOut:
    """MaxKB's record fields, plus the details (trace, stop reason, gaps, context) at top level;
    the service's own words (a failure, the rounds as thinking) in the reader's ``language``."""
    retrieval, chat = record.details.retrieval, record.details.chat
    return RecordOut(
        id=record.id,
        chat_id=record.chat_id,
        problem_text=record.question,
        padding_problem_text=retrieval.problem_text,
        answer_text=record.answer,
        # MaxKB's answer by node, as its page renders a record: one card with the answer, and as
        # its thinking the rounds (as the stream showed them) and the model's own reasoning.
        answer_text_list=[[AnswerCardOut(content=record.answer, reasoning_content=_thinking(record, language))]],
        # The answering model's thinking ("" when it does not reason; MaxKB's chunk and node
        # details call it so), never part of ``answer_text`` nor of later turns' history.
        reasoning_content=chat.reasoning,
        status=RECORD_STATUS.name(record.status) or UNKNOWN_STATUS,
        error=_stored_words(record, "error", language),
        message_tokens=record.message_tokens,
        answer_tokens=record.answer_tokens,
        run_time=record.run_time,
        # The question's W3C trace id: its spans when tracing is on, its log lines' ``trace_id``.
        trace_id=chat.trace_id,
        create_time=record.created_at,
        update_time=record.updated_at,
        agent_trace=[round_out(r) for r in retrieval.rounds],
        agent_stop_reason=STOP_REASON.name(retrieval.stop_reason),
        # The search the paragraphs' scores come from ("" for a record saved before it was kept).
        search_mode=SEARCH_MODE.name(retrieval.search_mode),
        sufficient=retrieval.sufficient,
        missing=retrieval.missing,
        rewrite_error=_stored_words(retrieval, "rewrite_error", language),
        paragraph_list=[paragraph_out(p) for p in retrieval.paragraphs],
        parts=parts_out(record.details),
        context_info=_context_out(record.details),
        search_step=SearchStepOut(step_type="iterative_search", run_time=round(retrieval.run_time, 3)),
        chat_step=ChatStepOut(
            model=chat.model,
            offline_model=chat.offline_model,
            message_tokens=record.message_tokens,
            answer_tokens=record.answer_tokens,
            run_time=round(chat.run_time, 3),
        ),
        source=RECORD_SOURCE.name(record.source) or DEFAULT_SOURCE,
        vote_status=vote_status(record.vote),  # the reader's own vote
        vote_reason=record.vote_reason,
    )


def block_answer_out(record: chat_pb.ChatRecord, language: Language = DEFAULT_LANGUAGE) -> BlockAnswerOut:
    """The saved record as MaxKB answers a question asked without a stream: its record fields
    under MaxKB's names for them (``content``, ``answer_list``, the two token counts)."""
    shown = record_out(record, language)
    [cards] = shown.answer_text_list
    return BlockAnswerOut(
        **{name: getattr(shown, name) for name in shown.model_fields_set},
        operate=True,
        content=shown.answer_text,
        is_end=True,
        answer_list=cards,
        prompt_tokens=shown.message_tokens,
        completion_tokens=shown.answer_tokens,
    )


def _context_out(details: chat_pb.RecordDetails) -> ContextInfoOut:
    """How the chat's history was fitted to the model; an empty object when nothing was kept."""
    if not details.HasField("context"):
        return ContextInfoOut()
    context = details.context
    return ContextInfoOut(
        enabled=context.enabled,
        recent_rounds=context.recent_rounds,
        compacted_rounds=context.compacted_rounds,
        revision=context.revision,
        token_budget=context.token_budget,
        estimated_tokens=context.estimated_tokens,
    )


def _thinking(record: chat_pb.ChatRecord, language: Language) -> str:
    """The retrieval rounds in the progress stream's words, then the model's own thinking: what a
    page that shows a record's reasoning shows after a reload, as it did while the answer came."""
    events: list[common_pb2.Progress] = []
    rounds = record.details.retrieval.rounds
    for index, trace in enumerate(rounds):
        first = trace.queries[0] if trace.queries else ""
        searching = common_pb2.Retrieving(round=trace.round, query=first, queries=trace.queries)
        events.append(common_pb2.Progress(retrieving=searching))
        if not trace.assessment_skipped:  # the stream sent no assessment for such a round either
            verdict = common_pb2.Assessed(
                round=trace.round, sufficient=trace.sufficient, missing=trace.missing, continues=index + 1 < len(rounds)
            )
            events.append(common_pb2.Progress(assessed=verdict))
    lines = (progress_line(progress_payload(event), language) for event in events)
    return "".join(f"{line}\n" for line in lines if line) + record.details.chat.reasoning


def parts_out(details: chat_pb.RecordDetails) -> list[PartOut]:
    """Per part of the question, its verdict and the paragraphs its quotes come from (in quote
    order, each once): what readers check instead of parsing the answer's wording. Only the
    offline model judges parts; any other model's record has none."""
    if not details.chat.offline_model:
        return []
    return [
        PartOut(
            part=part.part,
            # The shape checks that the name is one of the three.
            verdict=cast(PartVerdictName, PART_VERDICT.name(part.verdict)),
            paragraph_ids=list(dict.fromkeys(q.paragraph_id for q in part.quotes)),
        )
        for part in details.retrieval.part_support
    ]


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """Text a spreadsheet would run as a formula (``=HYPERLINK(…)`` in a visitor's question)
    gets a leading apostrophe, which spreadsheets show as plain text (OWASP's CSV-injection
    advice); numbers and other text are untouched."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def export_row(record: chat_pb.ChatRecord) -> dict[str, Any]:
    """One CSV row of the conversation log (``EXPORT_COLUMNS``), every text cell spreadsheet-safe."""
    retrieval = record.details.retrieval
    row = {
        "chat_id": record.chat_id,
        "record_id": record.id,
        "create_time": record.created_at,
        "question": record.question,
        "rewritten_question": retrieval.problem_text,
        "answer": record.answer,
        "status": RECORD_STATUS.name(record.status) or UNKNOWN_STATUS,
        "stop_reason": STOP_REASON.name(retrieval.stop_reason),
        "sufficient": retrieval.sufficient,
        "missing": retrieval.missing,
        "rounds": len(retrieval.rounds),
        "error": record.error,
        "source": RECORD_SOURCE.name(record.source) or DEFAULT_SOURCE,
    }
    return {column: spreadsheet_safe(value) for column, value in row.items()}


def application_out(a: chat_pb.Application) -> ApplicationOut | VisitorApplicationOut:
    """The whole application; a visitor's view (no search settings: the chat service keeps the
    prompts and settings to the operator and the application's keys) has only what a page shows."""
    page = dict(page_out(a.page))  # the page's fields, flat in both views as MaxKB has them
    if not a.HasField("search"):
        return VisitorApplicationOut(id=a.id, name=a.name, desc=a.description, **page)
    return ApplicationOut(
        id=a.id,
        name=a.name,
        desc=a.description,
        dataset_id_list=list(a.dataset_ids),
        dialogue_number=a.dialogue_number,
        dataset_setting=DatasetSettingOut(
            top_n=a.search.top_n,
            similarity=round(a.search.similarity, 4),
            search_mode=SEARCH_MODE.name(a.search.search_mode) or DEFAULT_SEARCH_MODE_NAME,
        ),
        model_setting=ModelSettingOut(
            prompt=a.model_setting.prompt,
            system=a.model_setting.system,
            chat_model_id=a.model_setting.chat_model_id,
            aux_model_id=a.model_setting.aux_model_id,
            rerank_model_id=a.model_setting.rerank_model_id,
        ),
        create_time=a.created_at,
        update_time=a.updated_at,
        **page,
    )


def default_prologue(a: chat_pb.Application) -> str:
    """The opening message of an application whose operator wrote none: who it is and how it
    answers, so a visitor does not face an empty page."""
    about = f"{a.description.strip()}\n\n" if a.description.strip() else ""
    return f"您好，我是「{a.name}」。{about}我会在知识库里多轮检索后作答，并注明依据的资料；资料里没有的，我会直说。"


def visitor_profile_out(a: chat_pb.Application) -> ApplicationProfileOut:
    """MaxKB's application profile, as its chat page reads it: the page's own features (voice,
    uploads, a password gate, a disclaimer) are all off; ``icon`` is the value that makes it draw
    the name's first letter."""
    return ApplicationProfileOut(
        id=a.id,
        name=a.page.title or a.name,
        desc=a.description,
        prologue=a.page.prologue or default_prologue(a),
        icon=a.page.logo or "/ui/favicon.ico",
        type="SIMPLE",
        show_source=not a.page.hide_sources,
        show_history=True,
        language=None,
        multiple_rounds_dialogue=True,
        stt_model_enable=False,
        tts_model_enable=False,
        tts_type="BROWSER",
        tts_autoplay=False,
        stt_autosend=False,
        file_upload_enable=False,
        file_upload_setting={},
        disclaimer=bool(a.page.disclaimer),
        disclaimer_value=a.page.disclaimer,
        progress_mode=progress_form(a.page.progress),
    )


def chat_summary_out(chat: chat_pb.ChatSummary) -> ChatSummaryOut:
    """A chat as MaxKB's history list shows it (``abstract`` is its title)."""
    return ChatSummaryOut(
        id=chat.id,
        application_id=chat.application_id,
        abstract=chat.abstract,
        chat_record_count=chat.record_count,
        create_time=chat.created_at,
        update_time=chat.updated_at,
    )


def page_out(page: chat_pb.PageSetting) -> PageSettingOut:
    """An application's share-page settings, under MaxKB's names where it has them."""
    return PageSettingOut(
        prologue=page.prologue,
        show_source=not page.hide_sources,
        show_trace=not page.hide_trace,
        progress_mode=progress_form(page.progress),
        title=page.title,
        logo=page.logo,
        accent_color=page.accent_color,
        disclaimer=bool(page.disclaimer),
        disclaimer_value=page.disclaimer,
        placeholder=page.placeholder,
    )


def dataset_out(d: retrieval_pb.Dataset, language: Language = DEFAULT_LANGUAGE) -> DatasetOut:
    """MaxKB's dataset fields, plus its embedding model: ``embedding_model_id`` ("" =
    the deployment's default; MaxKB's spelling ``embedding_mode_id`` too), the vectors' size,
    and ``embedding_switch``, the newest change of model (null when there never was one; why it
    failed in the reader's ``language``)."""
    return DatasetOut(
        id=d.id,
        name=d.name,
        desc=d.description,
        document_count=d.document_count,
        paragraph_count=d.paragraph_count,
        create_time=d.created_at,
        embedding_model_id=d.embedding_model_id,
        embedding_mode_id=d.embedding_model_id,
        embedding_model_name=d.embedding_model_name,
        embedding_dimension=d.embedding_dimension,
        embedding_switch=embedding_switch_out(d.embedding_switch, language) if d.HasField("embedding_switch") else None,
        sync_hours=d.sync_hours,
        sync_due_at=d.sync_due_at,
    )


def embedding_switch_out(s: retrieval_pb.EmbeddingSwitch, language: Language) -> EmbeddingSwitchOut:
    """A change of embedding model: ``status`` (``queued``, ``embedding``, ``ready``, ``failed``,
    ``cancelled``), its progress in paragraphs, and why it failed."""
    return EmbeddingSwitchOut(
        to_model_id=s.to_model_id,
        status=EMBEDDING_SWITCH_STATE.name(s.state) or UNKNOWN_STATUS,
        progress=ProgressOut(done=s.progress_done, total=s.progress_total),
        error=_stored_words(s, "error", language),
    )


def _stored_words(holder: Message, field: str, language: Language) -> str:
    """What a service stored or answered (a record's or a document's failure, a page check's
    note, a sync's message) as a reader of ``language`` reads it, from its words by code (the
    ``<field>_words`` beside the English ``<field>``); empty stays empty, and English with no
    words beside it (an older service's) reads as general words with an error id."""
    words_field = f"{field}_words"
    if holder.HasField(words_field):
        return shown(from_proto(getattr(holder, words_field)), STORED_FAILURE_STATUS, language)
    return shown(Said(UNRECOGNISED), STORED_FAILURE_STATUS, language) if getattr(holder, field) else ""


def document_out(d: retrieval_pb.Document, language: Language = DEFAULT_LANGUAGE) -> DocumentOut:
    """MaxKB's document fields, plus where its ingestion job is: ``status`` (``queued``,
    ``parsing``, ``embedding``, ``ready``, ``failed``), ``progress`` (paragraphs embedded of the
    job's total), the failure's ``error`` in words and the ``source_type`` it came from, so any
    client can wait for ``ready`` by polling the document. A web page's document has MaxKB's
    ``meta.source_url`` and ``source``: when it was last checked and what that found (``state``
    "" = the page is there, ``gone``, ``unreachable``; ``note`` in words), the words in the
    reader's ``language``."""
    return DocumentOut(
        id=d.id,
        dataset_id=d.dataset_id,
        name=d.name,
        paragraph_count=d.paragraph_count,
        char_length=d.char_length,
        create_time=d.created_at,
        status=DOCUMENT_STATUS.name(d.status) or UNKNOWN_STATUS,
        progress=ProgressOut(done=d.progress_done, total=d.progress_total),
        error=_stored_words(d, "error", language),
        source_type=d.source_type,
        update_time=d.updated_at,
        meta=DocumentMetaOut(source_url=d.source_url) if d.source_url else DocumentMetaOut(),
        source=SourceCheckOut(
            checked_at=d.source_checked_at, state=d.source_state, note=_stored_words(d, "source_note", language)
        ),
    )


def synced_out(synced: retrieval_pb.SyncedDocument, language: Language = DEFAULT_LANGUAGE) -> SyncedDocumentOut:
    """A web document after a sync, with what the sync did: ``sync.outcome`` (``unchanged``,
    ``queued``, ``gone``, ``failed``, ``busy``) and ``sync.message`` in words."""
    return SyncedDocumentOut(
        **dict(document_out(synced.document, language)),
        sync=SyncOut(
            outcome=SYNC_OUTCOME.name(synced.outcome) or UNKNOWN_STATUS,
            message=_stored_words(synced, "message", language),
        ),
    )


def detached_out(reply: retrieval_pb.DeleteDatasetResponse) -> DetachedOut:
    """A dataset delete's answer: the applications that no longer search it (their dataset
    lists lost it in the same transaction), so the operator learns what changed."""
    return DetachedOut(
        detached_applications=[DetachedApplicationOut(id=a.id, name=a.name) for a in reply.detached_applications]
    )


def managed_paragraph_out(p: retrieval_pb.ManagedParagraph) -> ManagedParagraphOut:
    """A paragraph as an operator manages it: MaxKB's fields (``is_active`` false = never
    retrieved), plus its dataset and its position in the document."""
    return ManagedParagraphOut(
        id=p.id,
        dataset_id=p.dataset_id,
        document_id=p.document_id,
        title=p.title,
        content=p.content,
        is_active=p.enabled,
        position=p.position,
    )


def paragraph_page_out(reply: retrieval_pb.ListParagraphsResponse, page: int, size: int) -> ParagraphPageOut:
    """One page of a document's paragraphs in MaxKB's page shape (the conversation log's too)."""
    return ParagraphPageOut(
        records=[managed_paragraph_out(p) for p in reply.paragraphs], current=page, size=size, total=reply.total
    )


def upload_rules_out(max_mb: int, language: Language = DEFAULT_LANGUAGE) -> UploadRulesOut:
    """What an upload may be: the suffixes taken in, the size limit in MiB, and the sentence the
    415 refusal uses, in the reader's language."""
    types = SUPPORTED_TYPES_SENTENCE.render(language)
    return UploadRulesOut(suffixes=list(SUPPORTED_SUFFIXES), max_mb=max_mb, types=types)


MODEL_TYPES: dict[str, ModelType] = {"embedding": "EMBEDDING", "rerank": "RERANKER"}


def model_out(m: chat_pb.ModelInfo) -> ModelOut:
    """A registered model as MaxKB v1 lists one (``id``, ``name``, ``provider``, ``model_name``,
    ``model_type``), plus ``purpose``, ``api_base``, the applications using it and ``key_hint``:
    never the API key (MaxKB returns its credential masked; here not even that)."""
    return ModelOut(
        id=m.id,
        name=m.name,
        provider=m.provider,
        model_name=m.model,
        model_type=MODEL_TYPES.get(m.purpose, "LLM"),
        purpose=m.purpose,
        api_base=m.base_url,
        key_hint=m.key_hint,
        application_ids=list(m.application_ids),
        create_time=m.created_at,
        update_time=m.updated_at,
    )


def api_key_out(k: chat_pb.ApiKeyInfo) -> ApiKeyOut:
    """An API key as the operator's list shows it: MaxKB's ``id``/``is_active``/
    ``application_id``, and instead of MaxKB's ``secret_key`` only ``masked`` (prefix + "…"):
    the key itself is shown once, when it is created or rotated. Times are RFC 3339, "" = none."""
    return ApiKeyOut(
        id=k.id,
        application_id=k.application_id,
        masked=k.masked,
        is_active=k.is_active,
        expires_at=k.expires_at,
        use_count=k.use_count,
        last_used_at=k.last_used_at,
        create_time=k.created_at,
    )


def access_token_out(t: chat_pb.AccessTokenInfo) -> AccessTokenOut:
    """An application's share link: MaxKB's ``application_id``/``access_token``/``is_active``/
    ``access_num``/``white_active``/``white_list`` (the sites that may embed its page, when
    limited), plus the daily cap for all its visitors, its expiry and its use."""
    return AccessTokenOut(
        application_id=t.application_id,
        access_token=t.access_token,
        is_active=t.is_active,
        access_num=t.access_num,
        daily_cap=t.daily_cap,
        white_active=t.sites_limited,
        white_list=list(t.allowed_sites),
        expires_at=t.expires_at,
        use_count=t.use_count,
        last_used_at=t.last_used_at,
        create_time=t.created_at,
    )


# MaxKB's vote_status: "-1" no vote (sent: withdraw one's vote), "0" like, "1" oppose.
VOTE_STATUS: dict[chat_pb.Vote, VoteStatus] = {
    chat_pb.VOTE_UNSPECIFIED: "-1",
    chat_pb.VOTE_UP: "0",
    chat_pb.VOTE_DOWN: "1",
}
VOTE_OF_STATUS = {status: vote for vote, status in VOTE_STATUS.items()}


def vote_status(vote: chat_pb.Vote) -> VoteStatus:
    """A vote as MaxKB's ``vote_status`` spells it (one this build does not know: no vote)."""
    return VOTE_STATUS.get(vote, VOTE_STATUS[chat_pb.VOTE_UNSPECIFIED])


def vote_out(vote: chat_pb.Vote, reason: str) -> VoteOut:
    """A caller's own vote on a record, as the vote route shows it (the record has the same two keys)."""
    return VoteOut(vote_status=vote_status(vote), vote_reason=reason)


def usage_day_out(day: chat_pb.UsageDay) -> UsageDayOut:
    """One day of MaxKB's chat_record_aggregate_trend, and our outcomes, times and reasons."""
    return UsageDayOut(
        day=day.date,
        chat_record_count=day.questions,
        star_num=day.votes_up,
        trample_num=day.votes_down,
        tokens_num=day.tokens_in + day.tokens_out,
        message_tokens=day.tokens_in,
        answer_tokens=day.tokens_out,
        answered=day.answered,
        failed=day.failed,
        stopped=day.stopped,
        interrupted=day.interrupted,
        p50_run_time=round(day.p50_seconds, 3),
        p95_run_time=round(day.p95_seconds, 3),
        mean_rounds=round(day.mean_rounds, 2),
        insufficient=day.insufficient,
        insufficient_rate=round(day.insufficient / day.questions, 4) if day.questions else 0.0,
        stop_reasons={STOP_REASON.name(t.stop_reason): t.count for t in day.stop_reasons},
    )


# The conversation log: an entry is a record (``record_out``) with where it came
# from, its outcome columns and its votes; MaxKB's star_num/trample_num are the vote counts.
LOG_EXPORT_COLUMNS = [*EXPORT_COLUMNS, "log_source", "vote", "votes_up", "votes_down", "vote_reason"]


def log_entry_out(entry: chat_pb.LogEntry, language: Language = DEFAULT_LANGUAGE) -> LogEntryOut:
    """The record, its ``vote_reason`` the latest vote's (the operator sees everyone's votes,
    not a reader's own), and the log's own fields."""
    record = dict(record_out(entry.record, language)) | {"vote_reason": entry.vote_reason}
    return LogEntryOut(
        **record,
        application_id=entry.application_id,
        log_source=LOG_SOURCE.name(entry.source),
        rounds=entry.rounds,
        vote=VOTE.name(entry.vote),
        star_num=entry.votes_up,
        trample_num=entry.votes_down,
        improved_paragraph_ids=list(entry.improved_paragraph_ids),
        # What made a failed question fail, for the operator ("" unless it failed): as the
        # service put it, beside the error id the record's ``error`` carries.
        error_detail=entry.record.details.error_detail,
    )


def log_export_row(entry: chat_pb.LogEntry) -> dict[str, Any]:
    """``export_row`` and the log's own columns, every text cell spreadsheet-safe."""
    extra = {
        "log_source": LOG_SOURCE.name(entry.source),
        "vote": VOTE.name(entry.vote),
        "votes_up": entry.votes_up,
        "votes_down": entry.votes_down,
        "vote_reason": entry.vote_reason,
    }
    return {**export_row(entry.record), **{column: spreadsheet_safe(value) for column, value in extra.items()}}


# The knowledge-gap report and improvements: groups of gaps, most records first; an
# example links to its record through its chat and record ids.
GAP_EXPORT_COLUMNS = ["rank", "label", "count", "gaps", "example_questions", "records"]


def gap_group_out(group: chat_pb.GapGroup) -> GapGroupOut:
    return GapGroupOut(
        label=group.label,
        count=group.count,
        gaps=list(group.gaps),
        examples=[
            GapExampleOut(
                chat_id=e.chat_id,
                chat_record_id=e.record_id,
                problem_text=e.question,
                gap=e.gap,
                create_time=e.created_at,
            )
            for e in group.examples
        ],
    )


def gap_export_row(rank: int, group: chat_pb.GapGroup) -> dict[str, Any]:
    """One CSV row per group: its gaps and example questions one per line, and the records as
    ``chat_id/record_id`` (the path under ``/api/application/{id}/chat/`` that opens each)."""
    row = {
        "label": group.label,
        "gaps": "\n".join(group.gaps),
        "example_questions": "\n".join(e.question for e in group.examples),
        "records": "\n".join(f"{e.chat_id}/chat_record/{e.record_id}" for e in group.examples),
    }
    return {"rank": rank, "count": group.count, **{key: spreadsheet_safe(value) for key, value in row.items()}}


def improvement_out(chat_record_id: str, reply: chat_pb.ImproveRecordResponse) -> ImprovementOut:
    return ImprovementOut(
        chat_record_id=chat_record_id,
        dataset_id=reply.dataset_id,
        document_id=reply.document_id,
        paragraph_id=reply.paragraph_id,
    )


# The audit trail (docs/access.md): one state-changing action per row, newest first. ``actor``
# is the username (``operator`` for the break-glass token), else the acting credential's id.
AUDIT_EXPORT_COLUMNS = [
    "id",
    "time",
    "actor_kind",
    "actor",
    "client_address",
    "action",
    "object_kind",
    "object_id",
    "object_name",
    "detail",
]


def audit_event_out(event: chat_pb.AuditEvent) -> AuditEventOut:
    return AuditEventOut(
        id=event.id,
        time=event.at,
        actor_kind=event.actor_kind,
        actor=event.actor_name or event.actor_id,
        client_address=event.client_address,
        action=event.action,
        object_kind=event.object_kind,
        object_id=event.object_id,
        object_name=event.object_name,
        detail=event.detail,
    )


def audit_export_row(event: chat_pb.AuditEvent) -> dict[str, Any]:
    """One CSV row of the trail, every cell spreadsheet-safe: names and details are typed by
    people (an application called ``=cmd|…``) and must not run as formulas."""
    return {column: spreadsheet_safe(value) for column, value in audit_event_out(event).wire().items()}
