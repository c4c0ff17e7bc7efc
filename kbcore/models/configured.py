"""The model client every service uses, built from settings in one place."""

from __future__ import annotations

from kbcore.models.base import ModelClient
from kbcore.models.factory import create_model_client
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
