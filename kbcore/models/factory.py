"""Choose the model client from configuration: a remote endpoint when one is set, else offline
(``model_client_for``: the deployment's own, built from settings in one place for every service)."""

from __future__ import annotations

from kbcore.models.base import ModelClient
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.offline.terms import load_dictionaries
from kbcore.models.openai_client import OpenAIModelClient
from kbcore.settings import Settings


def model_client_for(settings: Settings) -> ModelClient:
    return create_model_client(
        base_url=settings.model_base_url or None,
        api_key=settings.model_api_key or None,
        chat_model=settings.chat_model,
        aux_model=settings.aux_model or None,
        timeout=settings.model_timeout,
        disable_thinking=settings.disable_thinking,
        provider=settings.model_provider,
    )


def create_model_client(
    *,
    base_url: str | None,
    api_key: str | None,
    chat_model: str,
    aux_model: str | None,
    timeout: float,
    disable_thinking: bool,
    provider: str = "",
) -> ModelClient:
    """No base URL means no endpoint: the offline extractive model answers, labelled as such."""
    if not base_url:
        load_dictionaries()
        return OfflineExtractiveModel()
    return OpenAIModelClient(
        base_url=base_url,
        api_key=api_key,
        chat_model=chat_model,
        aux_model=aux_model,
        timeout=timeout,
        disable_thinking=disable_thinking,
        provider=provider,
    )
