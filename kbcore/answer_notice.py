"""The notice an extracted answer (the offline model's) opens with: written by the model, and
left out of the operator log's answer column by the pages, which must not import the model."""

from __future__ import annotations

OFFLINE_LABEL = "（未配置大模型：以下为资料原文摘录）"
# What earlier versions opened an answer with: stored records and history still carry it.
FORMER_LABELS = ("（离线抽取式模型：未配置大模型，以下内容直接摘自检索资料）",)
