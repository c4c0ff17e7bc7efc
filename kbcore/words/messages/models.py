"""Messages about model endpoints and embeddings."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "model_named_already_exists": Message(
        "a model named {row_name} already exists",
        "已存在名为 {row_name} 的模型",
    ),
    "api_base_changed_another_address_enter": Message(
        "api_base changed to another address: enter the API key for it again (credential.api_key; an empty one if it needs none), because the stored key is only sent to the address it was entered for",
        "api_base 已改为另一个地址：请为它重新填写 API 密钥（credential.api_key；不需要密钥则留空），因为保存的密钥只会发往填写它时的地址",
    ),
    "api_key_longer_characters": Message(
        "api_key is longer than {max_key} characters",
        "api_key 不能超过 {max_key} 个字符",
    ),
    "application_uses_model_must_stay_one": Message(
        "application {application_id} uses this model as its {slot}: it must stay one of {sorted_purposes}",
        "应用 {application_id} 把这个模型用作 {slot}：它的用途必须保持为 {sorted_purposes} 之一",
    ),
    "base_url_must_be_http_s": Message(
        "base_url must be an http(s) URL such as https://api.openai.com/v1, got {value}",
        "base_url 须为 HTTP 或 HTTPS 地址，例如 https://api.openai.com/v1，收到的是 {value}",
    ),
    "embedding_model_no_longer_registered_give": Message(
        "embedding model {model_id} is no longer registered: give its datasets another embedding model",
        "向量模型 {model_id} 已不再登记：请为使用它的知识库更换向量模型",
    ),
    "embedding_model_not_registered_register_under": Message(
        "embedding model {model_id} is not registered: register it under Model endpoints first",
        "向量模型 {model_id} 未登记：请先在「模型」中登记它",
    ),
    "embedding_model_answered_without_vector": Message(
        "embedding model {row_name} answered without a vector",
        "向量模型 {row_name} 的回复中没有向量",
    ),
    "model_does_not_exist": Message(
        "model {endpoint_id} does not exist",
        "模型 {endpoint_id} 不存在",
    ),
    "model_not_registered_deleted_choose_another": Message(
        "model {endpoint_id} is not registered (deleted?): choose another model",
        "模型 {endpoint_id} 未登记（可能已被删除），请选择其他模型",
    ),
    "model_embeds_dataset_s_give_them": Message(
        "model {row_name} embeds {len_datasets} dataset(s) ({join_map_repr_datasets}): give them another embedding model first",
        "模型 {row_name} 正在为 {len_datasets} 个知识库生成向量（{join_map_repr_datasets}）：请先为它们更换向量模型",
    ),
    "model_registered_model_not_embedding_model": Message(
        "model {row_name} is registered as a {row_purpose} model, not an embedding model: choose a model registered with purpose 'embedding'",
        "模型 {row_name} 登记的用途是 {row_purpose}，不是向量模型：请选择用途登记为「向量」的模型",
    ),
    "model_used_application_s_choose_another": Message(
        "model {row_name} is used by {len_users} application(s) ({join_users}): choose another model for them first",
        "模型 {row_name} 正被 {len_users} 个应用使用（{join_users}）：请先为它们选择其他模型",
    ),
    "model_setting_model_not_registered": Message(
        "model_setting.{slot}: model {endpoint_id} is not registered",
        "model_setting.{slot}：模型 {endpoint_id} 未登记",
    ),
    "model_setting_model_model_not_one": Message(
        "model_setting.{slot}: model {row_name} is a {row_purpose} model, not one of {sorted_purposes}",
        "model_setting.{slot}：模型 {row_name} 的用途是 {row_purpose}，不是 {sorted_purposes} 之一",
    ),
    "unknown_one_2": Message(
        "unknown {name} {value}: one of {join_allowed}",
        "未知的 {name}：{value}，可选：{join_allowed}",
    ),
    "longer_characters": Message(
        "{name} is longer than {limit} characters",
        "{name} 不能超过 {limit} 个字符",
    ),
    "must_not_be_empty": Message(
        "{name} must not be empty",
        "{name} 不能为空",
    ),
    # {exc} is a stored key that cannot be decrypted (catalogued above, so it reads in Chinese).
    "embedding_model": Message(
        "embedding model {row_name}: {exc}",
        "向量模型 {row_name}：{exc}",
    ),
    # {exc} stays English: the model endpoint's own error, without its key.
    "embedding_model_did_not_answer_embeddings": Message(
        "embedding model {row_name} did not answer an embeddings call: {exc}",
        "向量模型 {row_name} 没有响应向量化请求：{exc}",
    ),
    # The embedding model a dataset is searched with, as other sentences name it
    # (kbcore.embedding_rule.model_label).
    "embedding_model_2": Message(
        "embedding model {model_name}",
        "向量模型 {model_name}",
    ),
    "deployment_default_embedder": Message(
        "the deployment's default embedder",
        "部署默认的向量模型",
    ),
    # A model call that failed: its kind's sentence, the same on every surface
    # (kbcore.models.failures.SENTENCES).
    "model_endpoint_unavailable_try_again_later": Message(
        "the model endpoint is unavailable; try again later",
        "模型端点暂时不可用，请稍后再试",
    ),
    "model_endpoint_refused_request": Message(
        "the model endpoint refused the request",
        "模型端点拒绝了这次请求",
    ),
    "model_endpoint_took_too_long": Message(
        "the model endpoint took too long",
        "模型端点响应超时",
    ),
    "model_endpoint_answer_could_not_be": Message(
        "the model endpoint's answer could not be used",
        "模型端点返回的结果无法使用",
    ),
    # Why a dataset still has its model: a change of model that ended without being made.
    "embedding_change_not_made": Message(
        "the change of embedding model was not made ({reason}); the dataset keeps its model",
        "更换嵌入模型未完成（{reason}），知识库仍使用原来的模型",
    ),
    "embedding_model_answered_wrongly": Message(
        "the embedding model answered in a way that cannot be used",
        "嵌入模型的回答无法使用",
    ),
    # The parts of "these datasets use different embedding models … ({listed})".
    "dataset_uses_model": Message(
        "{dataset} uses {model}",
        "{dataset} 使用{model}",
    ),
    "model_being_changed": Message(
        "{served}, being changed to {target}",
        "{served}，正在更换为{target}",
    ),
}
