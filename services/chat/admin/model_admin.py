"""The rules for registered model endpoints: what a valid one is, which applications
use one, which datasets embed with one (asked of the retrieval service, whose datasets they
are), and that the API key goes in sealed and never comes out (only its hint)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.db.audit import record_action
from kbcore.db.tables import Application, ModelEndpoint, utcnow
from kbcore.embedding_rule import of_dataset
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.models.endpoints import AUX_PURPOSES, CHAT_PURPOSES, PROVIDERS, PURPOSES
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.secret_box import SecretBox, key_hint
from kbcore.words.said import said
from services.chat.audit_details import changed_fields, detail_of

MODEL = "model"  # the audit trail's object kind
MAX_NAME = 100
MAX_URL = 500
MAX_MODEL = 200
MAX_KEY = 500
DEFAULT_PORTS = {"http": 80, "https": 443}
# A stored key is only ever sent to the address it was entered for: moving the address without
# entering the key again would send it to whoever answers there (MaxKB keeps it).
KEY_FOR_NEW_ADDRESS = said("api_base_changed_another_address_enter")
# The model slots an application has, and the purposes each accepts (a reranker is optional).
SLOTS = {"chat_model_id": CHAT_PURPOSES, "aux_model_id": AUX_PURPOSES, "rerank_model_id": frozenset({"rerank"})}


@dataclass(frozen=True)
class EndpointFields:
    """Create: every field; update: the ones set (None = leave as it is)."""

    name: str | None = None
    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    purpose: str | None = None
    api_key: str | None = None

    def checked(self) -> dict[str, str]:
        values: dict[str, str] = {}
        if self.name is not None:
            values["name"] = _text("name", self.name, MAX_NAME)
        if self.provider is not None:
            values["provider"] = _choice("provider", self.provider, PROVIDERS)
        if self.base_url is not None:
            values["base_url"] = _base_url(self.base_url)
        if self.model is not None:
            values["model"] = _text("model", self.model, MAX_MODEL)
        if self.purpose is not None:
            values["purpose"] = _choice("purpose", self.purpose, PURPOSES)
        if self.api_key is not None and len(self.api_key.strip()) > MAX_KEY:
            raise InvalidRequest(said("api_key_longer_characters", max_key=MAX_KEY))
        return values


def _text(name: str, value: str, limit: int) -> str:
    value = value.strip()
    if not value:
        raise InvalidRequest(said("must_not_be_empty", name=name))
    if len(value) > limit:
        raise InvalidRequest(said("longer_characters", name=name, limit=limit))
    return value


def _choice(name: str, value: str, allowed: Iterable[str]) -> str:
    value = value.strip().lower()
    if value not in allowed:
        raise InvalidRequest(said("unknown_one_2", name=name, value=f"{value!r}", join_allowed=", ".join(allowed)))
    return value


def _base_url(value: str) -> str:
    value = _text("base_url", value, MAX_URL).rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidRequest(said("base_url_must_be_http_s", value=f"{value!r}"))
    return value


def address(base_url: str) -> tuple[str, str, int | None, str]:
    """Where a base URL sends requests, so a cosmetic edit (case, a default port, a trailing
    slash) is not taken for a move: scheme, host, port (the scheme's default filled in), path."""
    parts = urlsplit(base_url.strip())
    scheme, path = parts.scheme.lower(), parts.path.rstrip("/")
    try:
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:  # not a port number: host and port compared as written
        return scheme, parts.netloc.lower(), None, path
    return scheme, (parts.hostname or "").rstrip("."), port, path


def _key_named(changed: list[str]) -> list[str]:
    """The changed fields as the trail names them: a new API key is "api_key" (sealed anew on
    every entry, so it always differs), never its value or its hint."""
    named = [name for name in changed if name not in ("api_key_sealed", "key_hint")]
    return [*named, "api_key"] if len(named) < len(changed) else named


def users_of(applications: Iterable[Application], endpoint_id: str) -> list[str]:
    """The ids of the applications whose chat or auxiliary model is ``endpoint_id``."""
    return [a.id for a in applications if endpoint_id in {(a.model_setting or {}).get(s) for s in SLOTS}]


class ModelAdmin:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], box: SecretBox, retrieval: RetrievalStubs, rpc_timeout: float
    ) -> None:
        self._sessions = sessions
        self._box = box
        self._retrieval = retrieval
        self._rpc_timeout = rpc_timeout

    async def create(self, fields: EndpointFields) -> ModelEndpoint:
        values: dict[str, Any] = fields.checked()
        row = ModelEndpoint(**values, **self._sealed(fields.api_key or ""))
        return await self._saved(row, "create", f"{row.purpose} model")

    async def update(self, endpoint_id: str, fields: EndpointFields) -> ModelEndpoint:
        values: dict[str, Any] = fields.checked()
        if fields.api_key is not None:
            values.update(self._sealed(fields.api_key))
        row = await self.get(endpoint_id)
        moved = "base_url" in values and address(values["base_url"]) != address(row.base_url)
        if moved and fields.api_key is None and self.api_key(row):
            raise InvalidRequest(KEY_FOR_NEW_ADDRESS)
        if "purpose" in values:
            await self._purpose_fits_users(endpoint_id, values["purpose"])
        changed = changed_fields({name: getattr(row, name) for name in values}, values)
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = utcnow()  # a new version even when nothing changed: clients are rebuilt
        return await self._saved(row, "update", detail_of(_key_named(changed)))

    async def get(self, endpoint_id: str) -> ModelEndpoint:
        async with self._sessions() as session:
            row = await session.get(ModelEndpoint, endpoint_id) if endpoint_id else None
        if row is None:
            raise NotFound(said("model_does_not_exist", endpoint_id=endpoint_id))
        return row

    async def listed(self, purpose: str = "") -> tuple[list[ModelEndpoint], list[Application]]:
        """The models (of one purpose, or all) by name, and the applications (to say who uses which)."""
        query = select(ModelEndpoint).order_by(ModelEndpoint.name)
        if purpose:
            query = query.where(ModelEndpoint.purpose == _choice("purpose", purpose, PURPOSES))
        async with self._sessions() as session:
            rows = list((await session.scalars(query)).all())
            applications = list((await session.scalars(select(Application))).all())
        return rows, applications

    async def delete(self, endpoint_id: str) -> None:
        await self.get(endpoint_id)  # an unknown model is NOT_FOUND before anything else is asked
        # Asked before the transaction that deletes, which then holds no write lock over a call.
        datasets = await self._embedded_datasets(endpoint_id)
        async with self._sessions.begin() as session:
            row = await session.get(ModelEndpoint, endpoint_id)
            if row is None:
                raise NotFound(said("model_does_not_exist", endpoint_id=endpoint_id))
            users = users_of((await session.scalars(select(Application))).all(), endpoint_id)
            if users:
                raise Conflict(
                    said(
                        "model_used_application_s_choose_another",
                        row_name=f"{row.name!r}",
                        len_users=len(users),
                        join_users=", ".join(users),
                    )
                )
            if datasets:  # their vectors were made by it: without it they could not be searched
                raise Conflict(
                    said(
                        "model_embeds_dataset_s_give_them",
                        row_name=f"{row.name!r}",
                        len_datasets=len(datasets),
                        join_map_repr_datasets=", ".join(map(repr, datasets)),
                    )
                )
            await session.delete(row)
            record_action(session, "model.delete", MODEL, row.id, row.name)

    async def _embedded_datasets(self, endpoint_id: str) -> list[str]:
        """The names of the datasets whose vectors the model makes, or is about to make (a
        change of model to it is running)."""
        listed = await self._retrieval.datasets.ListDatasets(
            retrieval_pb.ListDatasetsRequest(), timeout=self._rpc_timeout
        )
        models = [of_dataset(d) for d in listed.datasets]
        return [m.dataset_name for m in models if endpoint_id in (m.model_id, m.switching_to)]

    async def check_choice(self, model_setting: dict[str, Any]) -> None:
        """An application's chosen models exist and fit their slot (chat: a chat model)."""
        for slot, purposes in SLOTS.items():
            endpoint_id = str(model_setting.get(slot) or "")
            if not endpoint_id:
                continue
            async with self._sessions() as session:
                row = await session.get(ModelEndpoint, endpoint_id)
            if row is None:
                raise InvalidRequest(said("model_setting_model_not_registered", slot=slot, endpoint_id=endpoint_id))
            if row.purpose not in purposes:
                raise InvalidRequest(
                    said(
                        "model_setting_model_model_not_one",
                        slot=slot,
                        row_name=f"{row.name!r}",
                        row_purpose=row.purpose,
                        sorted_purposes=sorted(purposes),
                    )
                )

    def api_key(self, row: ModelEndpoint) -> str:
        return self._box.open(row.api_key_sealed)

    def _sealed(self, api_key: str) -> dict[str, str]:
        api_key = api_key.strip()
        return {"api_key_sealed": self._box.seal(api_key), "key_hint": key_hint(api_key)}

    async def _purpose_fits_users(self, endpoint_id: str, purpose: str) -> None:
        _, applications = await self.listed()
        for application in applications:
            for slot, purposes in SLOTS.items():
                if (application.model_setting or {}).get(slot) == endpoint_id and purpose not in purposes:
                    raise Conflict(
                        said(
                            "application_uses_model_must_stay_one",
                            application_id=application.id,
                            slot=slot,
                            sorted_purposes=sorted(purposes),
                        )
                    )

    async def _saved(self, row: ModelEndpoint, verb: str, detail: str) -> ModelEndpoint:
        """Save the row with its audit row (``model.<verb>``): a name taken meanwhile saves neither."""
        try:
            async with self._sessions.begin() as session:
                row = await session.merge(row)
                await session.flush()
                record_action(session, f"model.{verb}", MODEL, row.id, row.name, detail)
        except IntegrityError:
            raise Conflict(said("model_named_already_exists", row_name=f"{row.name!r}")) from None
        return row
