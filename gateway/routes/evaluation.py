"""``POST /api/application/{app_id}/eval``: what the multi-round loop gains over one round, on
the operator's own knowledge base, with the application's datasets and search settings.

The retrieval service runs and scores the cases (``Evaluate``, next to the loop); this route
checks the JSON body, finds the application, and shows the scores as JSON. Who may: whoever may
change the application (``kbcore.permissions.table``), and the retrieval service checks that they
may read its datasets."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from gateway.backends import CallerBackend
from gateway.errors import ApiError, ok
from gateway.presenter import evaluation_out
from gateway.shapes.answers import EvaluationOut
from gateway.shapes.envelope import REFUSALS, Envelope
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.words.said import said

router = APIRouter(prefix="/api/application", tags=["evaluation"], responses=REFUSALS)

MAX_CASES = 500


class GoldIn(BaseModel):
    must_contain: str = Field(min_length=1, max_length=1000)
    doc: str = Field(default="", max_length=500)


class TurnIn(BaseModel):
    question: str = Field(min_length=1, max_length=20_000)
    gold: list[GoldIn] = Field(default_factory=list, max_length=100)
    answer_facts: list[str] = Field(default_factory=list, max_length=100)


class CaseIn(BaseModel):
    """The shipped questions.jsonl shape; fields the scoring does not use are ignored."""

    id: str = Field(default="", max_length=200)
    kind: str = Field(default="", max_length=100)
    turns: list[TurnIn] = Field(min_length=1, max_length=20)


class EvalIn(BaseModel):
    cases: list[CaseIn] = Field(min_length=1, max_length=MAX_CASES)
    # False asks the last turn alone, without the earlier turns as history: the follow-up is
    # then searched as typed, which is what rewriting is measured against.
    rewrite: bool = True


def case_message(case: CaseIn) -> retrieval_pb.EvalCase:
    return retrieval_pb.EvalCase(
        id=case.id,
        kind=case.kind,
        turns=[
            retrieval_pb.EvalTurn(
                question=turn.question,
                gold=[retrieval_pb.GoldSnippet(must_contain=g.must_contain, doc=g.doc) for g in turn.gold],
                answer_facts=turn.answer_facts,
            )
            for turn in case.turns
        ],
    )


@router.post("/{app_id}/eval", response_model=Envelope[EvaluationOut])
async def evaluate(app_id: str, body: EvalIn, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.applications.GetApplication, chat_pb.GetApplicationRequest(application_id=app_id)
    )
    application = reply.application
    if not application.dataset_ids:
        raise ApiError(400, said("application_has_no_datasets_evaluate"))
    evaluate_request = retrieval_pb.EvaluateRequest(
        dataset_ids=list(application.dataset_ids),
        search=application.search,
        cases=[case_message(case) for case in body.cases],
        without_history=not body.rewrite,
        aux_model_id=application.model_setting.aux_model_id,  # the application's auxiliary model
    )
    # Every case gets the time one question gets, as if the cases ran one after another.
    scored = await backend.unary(
        backend.retrieval.search.Evaluate, evaluate_request, timeout=backend.ask_timeout * len(body.cases)
    )
    return ok(evaluation_out(body.rewrite, scored).wire())
