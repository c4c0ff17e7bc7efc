"""``POST /api/application/{app_id}/eval``: what the multi-round loop gains over one round, on
the operator's own knowledge base, with the application's datasets and search settings."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from gateway.auth import require_operator
from gateway.backends import Backends, call
from gateway.errors import ApiError, ok
from gateway.evaluation import CaseIn, CaseScore, EvalIn, case_json, case_problem, history_of, score_case, summarize
from gateway.routes.datasets import backends, retrieve
from kb.chat.v1 import chat_service_pb2 as chat_pb
from kb.retrieval.v1 import retrieval_service_pb2 as retrieval_pb

router = APIRouter(prefix="/api/application", tags=["evaluation"])

# Questions run a few at a time: enough to overlap the model calls, not so many that an
# evaluation crowds out the chats the same services are answering.
CONCURRENT_QUESTIONS = 4


@router.post("/{app_id}/eval")
async def evaluate(
    app_id: str, body: EvalIn, request: Request, b: Annotated[Backends, Depends(backends)]
) -> JSONResponse:
    caller = await require_operator(request)
    problems = [p for i, case in enumerate(body.cases) if (p := case_problem(case, i))]
    if problems:
        raise ApiError(400, "; ".join(problems[:5]))
    reply = await call(
        b.chat.GetApplication(
            chat_pb.GetApplicationRequest(application_id=app_id, caller=caller), timeout=b.rpc_timeout
        )
    )
    application = reply.application
    if not application.dataset_ids:
        raise ApiError(400, "the application has no datasets to evaluate")
    gate = asyncio.Semaphore(CONCURRENT_QUESTIONS)

    async def run(case: CaseIn) -> CaseScore:
        request = retrieval_pb.RetrieveRequest(
            dataset_ids=list(application.dataset_ids),
            search=application.search,
            question=case.turns[-1].question,
            history=history_of(case, body.rewrite),
        )
        async with gate:
            return score_case(case, await retrieve(b, request))

    scores = await asyncio.gather(*(run(case) for case in body.cases))
    return ok({"rewrite": body.rewrite, "summary": summarize(scores), "cases": [case_json(s) for s in scores]})
