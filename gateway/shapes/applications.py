"""Shapes of applications and what gives access to them: API keys, share links, a visitor's
sign-in, and the registered models the applications answer with."""

from __future__ import annotations

from typing import Literal

from gateway.shapes.envelope import Shape


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


class ApplicationOut(Shape):
    """The whole application, as its operator (or its own API key) sees it."""

    id: str
    name: str
    desc: str
    dataset_id_list: list[str]
    dialogue_number: int
    dataset_setting: DatasetSettingOut
    model_setting: ModelSettingOut
    create_time: str
    update_time: str


class VisitorApplicationOut(Shape):
    """What a share-link visitor sees of an application: what a page shows."""

    id: str
    name: str
    desc: str


class VisitorOut(Shape):
    token: str
    application_id: str
    visitor_id: str


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
    model_type: Literal["LLM", "EMBEDDING", "RERANKER"]
    purpose: str
    api_base: str
    key_hint: str
    application_ids: list[str]
    create_time: str
    update_time: str


class ModelCheckOut(Shape):
    ok: bool
    message: str
