"""Applications (operator) and opening a chat (anyone allowed on the application)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from gateway.backends import CallerBackend
from gateway.errors import ok
from gateway.filled_pages import embed_script
from gateway.pages import EMBED_SCRIPT_HEADERS, JAVASCRIPT
from gateway.presenter import application_out, search_mode
from gateway.progress_forms import ProgressForm, progress_mode
from gateway.shapes.applications import ApplicationOut, VisitorApplicationOut
from gateway.shapes.envelope import REFUSALS, Envelope, download
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.limits import (
    DEFAULT_SIMILARITY,
    DEFAULT_TOP_N,
    MAX_DIALOGUE_NUMBER,
    MAX_DISCLAIMER_CHARS,
    MAX_LOGO_BYTES,
    MAX_PAGE_TITLE_CHARS,
    MAX_PLACEHOLDER_CHARS,
    MAX_PROLOGUE_CHARS,
    MAX_TOP_N,
)

router = APIRouter(prefix="/api/application", tags=["application"], responses=REFUSALS)
Application = Envelope[ApplicationOut | VisitorApplicationOut]


class DatasetSetting(BaseModel):
    top_n: int = Field(default=DEFAULT_TOP_N, ge=1, le=MAX_TOP_N)
    similarity: float = Field(default=DEFAULT_SIMILARITY, ge=0.0, le=1.0)
    search_mode: Literal["vector", "keyword", "hybrid", "embedding", "blend"] = "hybrid"


class ModelSettingIn(BaseModel):
    prompt: str = Field(default="", max_length=20000)
    system: str = Field(default="", max_length=20000)
    chat_model_id: str = Field(
        default="", max_length=36, description="a registered chat model; empty = the deployment's"
    )
    aux_model_id: str = Field(
        default="",
        max_length=36,
        description="a registered model for rewrite/assessment/summaries; empty = the deployment's",
    )
    rerank_model_id: str = Field(
        default="", max_length=36, description="a registered rerank model for each round's candidates; empty = none"
    )


class ApplicationIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    desc: str = Field(default="", max_length=5000)
    dataset_id_list: list[str] = Field(default_factory=list, max_length=100)
    dialogue_number: int = Field(default=5, ge=0, le=MAX_DIALOGUE_NUMBER)
    dataset_setting: DatasetSetting = Field(default_factory=DatasetSetting)
    model_setting: ModelSettingIn = Field(default_factory=ModelSettingIn)
    # The share page: sent together (one sent, the others take their defaults); none sent, an
    # update keeps them as they are.
    prologue: str | None = Field(
        default=None,
        max_length=MAX_PROLOGUE_CHARS,
        description="the opening message; its '- ' lines are suggested questions",
    )
    show_source: bool | None = Field(default=None, description="visitors see the paragraphs an answer quotes")
    show_trace: bool | None = Field(default=None, description="visitors see each answer's retrieval trace")
    progress_mode: ProgressForm | None = Field(
        default=None, description="how the chat route shows progress when a request does not say (docs/http.md)"
    )
    title: str | None = Field(
        default=None, max_length=MAX_PAGE_TITLE_CHARS, description="the name visitors see; empty: the name"
    )
    logo: str | None = Field(
        default=None,
        max_length=MAX_LOGO_BYTES * 4 // 3 + 64,
        description="a PNG, JPEG, GIF or WebP image as a data: URL; empty: none",
    )
    accent_color: str | None = Field(default=None, max_length=7, description="#rrggbb; empty: the pages' own")
    disclaimer: bool | None = Field(default=None, description="MaxKB's switch: show disclaimer_value under the input")
    disclaimer_value: str | None = Field(default=None, max_length=MAX_DISCLAIMER_CHARS)
    placeholder: str | None = Field(default=None, max_length=MAX_PLACEHOLDER_CHARS, description="the input's hint")

    def page(self) -> pb.PageSetting | None:
        page_fields = (
            self.prologue, self.show_source, self.show_trace, self.progress_mode, self.title, self.logo,
            self.accent_color, self.disclaimer, self.disclaimer_value, self.placeholder,
        )  # fmt: skip
        if all(field is None for field in page_fields):
            return None
        return pb.PageSetting(
            prologue=self.prologue or "",
            hide_sources=self.show_source is False,
            hide_trace=self.show_trace is False,
            progress=progress_mode(self.progress_mode),
            title=self.title or "",
            logo=self.logo or "",
            accent_color=self.accent_color or "",
            disclaimer=(self.disclaimer_value or "") if self.disclaimer is not False else "",
            placeholder=self.placeholder or "",
        )

    def message(self, application_id: str = "") -> pb.Application:
        return pb.Application(
            page=self.page(),
            id=application_id,
            name=self.name,
            description=self.desc,
            dataset_ids=self.dataset_id_list,
            dialogue_number=self.dialogue_number,
            search=common_pb2.SearchSettings(
                top_n=self.dataset_setting.top_n,
                similarity=self.dataset_setting.similarity,
                search_mode=search_mode(self.dataset_setting.search_mode),
            ),
            model_setting=pb.ModelSetting(
                prompt=self.model_setting.prompt,
                system=self.model_setting.system,
                chat_model_id=self.model_setting.chat_model_id,
                aux_model_id=self.model_setting.aux_model_id,
                rerank_model_id=self.model_setting.rerank_model_id,
            ),
        )


@router.post("", response_model=Envelope[ApplicationOut])
async def create_application(body: ApplicationIn, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.applications.CreateApplication, pb.CreateApplicationRequest(application=body.message())
    )
    return ok(application_out(reply.application).wire())


@router.get(
    "/embed",
    response_class=Response,
    responses=download("the chat bubble's script, as /ui/embed.js (MaxKB's embed snippet loads it)", JAVASCRIPT),
)
async def maxkb_embed_script(
    token: Annotated[str, Query(pattern=r"^[A-Za-z0-9_-]{1,128}$", description="the share link's access token")],
    protocol: Annotated[
        Literal["http", "https"] | None, Query(description="MaxKB's; the script's own address decides")
    ] = None,
    host: Annotated[str | None, Query(max_length=255, description="MaxKB's; the script's own address decides")] = None,
) -> Response:
    """MaxKB's embed snippet (``<script src=".../api/application/embed?protocol=…&host=…&token=…">``)
    pasted as it is: the same bubble as ``/ui/embed.js``, which reads the token from its own
    address. Declared before ``/{app_id}``, which would otherwise take ``embed`` for an id."""
    return Response(embed_script(), media_type=JAVASCRIPT, headers=EMBED_SCRIPT_HEADERS)


@router.get("", response_model=Envelope[list[ApplicationOut | VisitorApplicationOut]])
async def list_applications(backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.applications.ListApplications, pb.ListApplicationsRequest())
    return ok([application_out(a).wire() for a in reply.applications])


@router.get("/{app_id}", response_model=Application)
async def get_application(app_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.applications.GetApplication, pb.GetApplicationRequest(application_id=app_id)
    )
    return ok(application_out(reply.application).wire())


@router.put("/{app_id}", response_model=Envelope[ApplicationOut])
async def update_application(app_id: str, body: ApplicationIn, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.applications.UpdateApplication, pb.UpdateApplicationRequest(application=body.message(app_id))
    )
    return ok(application_out(reply.application).wire())


@router.get("/{app_id}/chat/open", response_model=Envelope[str])
async def open_chat(app_id: str, backend: CallerBackend) -> JSONResponse:
    """A new chat of the application; ``data`` is its id."""
    reply = await backend.unary(backend.chat.applications.OpenChat, pb.OpenChatRequest(application_id=app_id))
    return ok(reply.chat_id)
