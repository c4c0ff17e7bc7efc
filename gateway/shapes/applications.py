"""Shapes of applications and what gives access to them: API keys, share links, a visitor's
sign-in, and the registered models the applications answer with."""

from __future__ import annotations

from typing import Literal

from gateway.shapes.envelope import Shape

ModelType = Literal["LLM", "EMBEDDING", "RERANKER"]


class DatasetSettingOut(Shape):
    top_n: int
    similarity: float
    search_mode: str


class ModelSettingOut(Shape):
    prompt: str
    system: str
    chat_model_id: str
    aux_model_id: str
    rerank_model_id: str


class PageSettingOut(Shape):
    """An application's share page: the opening message (its "- " lines are suggested
    questions), the name, logo and colour visitors see, the disclaimer and the input's hint,
    whether visitors see sources and the trace, and how the chat route shows progress when a
    request does not say."""

    prologue: str
    show_source: bool
    show_trace: bool
    progress_mode: Literal["named", "reasoning", "off"]
    title: str
    logo: str
    accent_color: str
    disclaimer: bool
    disclaimer_value: str
    placeholder: str


class ApplicationNameOut(Shape):
    """What every view of an application starts with."""

    id: str
    name: str
    desc: str


class ApplicationSettingsOut(ApplicationNameOut):
    """The datasets an application searches, how, and with which models: its operator's."""

    dataset_id_list: list[str]
    dialogue_number: int
    dataset_setting: DatasetSettingOut
    model_setting: ModelSettingOut
    create_time: str
    update_time: str


# The page's fields come last on the wire: pydantic orders a shape's fields from its last base
# to its first, so the page is the first base of both views.
class ApplicationOut(PageSettingOut, ApplicationSettingsOut):
    """The whole application, as its operator (or its own API key) sees it."""


class VisitorApplicationOut(PageSettingOut, ApplicationNameOut):
    """What a share-link visitor sees of an application: what a page shows."""


class ServerProfileOut(Shape):
    """What MaxKB's pages read about the server: not an enterprise edition."""

    version: str
    IS_XPACK: bool
    XPACK_LICENSE_IS_VALID: bool


class ApplicationProfileOut(Shape):
    """A share-link visitor's application as MaxKB's chat page reads it."""

    id: str
    name: str
    desc: str
    prologue: str
    icon: str
    type: Literal["SIMPLE"]
    show_source: bool
    show_history: bool
    language: str | None
    multiple_rounds_dialogue: bool
    stt_model_enable: bool
    tts_model_enable: bool
    tts_type: str
    tts_autoplay: bool
    stt_autosend: bool
    file_upload_enable: bool
    file_upload_setting: dict[str, object]
    disclaimer: bool
    disclaimer_value: str
    progress_mode: Literal["named", "reasoning", "off"]


class ChatSummaryOut(Shape):
    """A chat in a visitor's history list."""

    id: str
    application_id: str
    abstract: str
    chat_record_count: int
    create_time: str
    update_time: str


class ChatPageOut(Shape):
    records: list[ChatSummaryOut]
    current: int
    size: int
    total: int


class NewApiKeyOut(Shape):
    """The key itself, shown this once."""

    id: str
    secret_key: str
    application_id: str


class ApiKeyOut(Shape):
    id: str
    application_id: str
    masked: str
    is_active: bool
    expires_at: str
    use_count: int
    last_used_at: str
    create_time: str


class NewAccessTokenOut(Shape):
    application_id: str
    access_token: str
    access_num: int
    daily_cap: int


class AccessTokenOut(Shape):
    application_id: str
    access_token: str
    is_active: bool
    access_num: int
    daily_cap: int
    white_active: bool
    white_list: list[str]
    expires_at: str
    use_count: int
    last_used_at: str
    create_time: str


class ModelOut(Shape):
    """A registered model; never its API key, only ``key_hint``."""

    id: str
    name: str
    provider: str
    model_name: str
    model_type: ModelType
    purpose: str
    api_base: str
    key_hint: str
    application_ids: list[str]
    create_time: str
    update_time: str


class DeploymentModelsOut(Shape):
    """Whether answers come from the offline model unless an application chooses a registered one."""

    chat_offline: bool
    chat_models: int


class ModelCheckOut(Shape):
    ok: bool
    message: str
