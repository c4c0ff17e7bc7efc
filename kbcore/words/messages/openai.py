"""Messages about the OpenAI-compatible API."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "best_must_be_1_application_gives": Message(
        "best_of must be 1: an application gives one answer per question",
        "best_of 只能为 1：应用对每个问题只给出一个回答",
    ),
    "echo_not_supported_answer_never_repeats": Message(
        "echo is not supported: the answer never repeats the question",
        "不支持回显：回答从不重复问题",
    ),
    "logprobs_not_supported_answer_has_no": Message(
        "logprobs is not supported: an answer has no token probabilities",
        "不支持返回对数概率：回答不带 token 概率",
    ),
    "messages_content_not_supported_only_text": Message(
        "messages[{index}]: {part_type} content is not supported, only text",
        "序号为 {index} 的消息：不支持 {part_type} 类型的内容，只支持文本",
    ),
    "model_must_name_application_id_when": Message(
        "model must name an application (its id) when a person or the operator asks",
        "由用户或运营者提问时，模型参数须指定一个应用（填写应用 ID）",
    ),
    "n_must_be_1_application_gives": Message(
        "n must be 1: an application gives one answer per question",
        "每次只能生成一个回答：应用对每个问题只给出一个回答",
    ),
    "suffix_not_supported_application_answers_does": Message(
        "suffix is not supported: an application answers, it does not fill in text",
        "不支持后缀补全：应用只回答问题，不做文本补全",
    ),
    "chat_service_ended_answer_without_finishing": Message(
        "the chat service ended the answer without finishing it",
        "对话服务在回答完成前就结束了",
    ),
    "last_message_must_come_user_question": Message(
        "the last message must come from the user: it is the question",
        "最后一条消息须来自用户：它就是要问的问题",
    ),
    "last_user_message_empty": Message(
        "the last user message is empty",
        "最后一条用户消息为空",
    ),
    # A model that names no application this caller may ask, and why (gateway/openai/asking.py
    # model_not_found): each sentence.
    "model_does_not_exist_2": Message(
        "the model {model} does not exist",
        "模型 {model} 不存在",
    ),
    "model_does_not_exist_get_v1": Message(
        "the model {model} does not exist; GET /v1/models lists the applications this key may ask",
        "模型 {model} 不存在：GET /v1/models 会列出这个密钥可以提问的应用",
    ),
    "model_does_not_exist_there_no": Message(
        "the model {model} does not exist; there is no application {app_id}",
        "模型 {model} 不存在：没有应用 {app_id}",
    ),
    "model_does_not_exist_base_url": Message(
        "the model {model} does not exist; this base URL asks application {application_id}",
        "模型 {model} 不存在：这个接口地址对应的是应用 {application_id}",
    ),
    "model_does_not_exist_key_asks": Message(
        "the model {model} does not exist; this key asks application {application_id}",
        "模型 {model} 不存在：这个密钥对应的是应用 {application_id}",
    ),
    # A field an application cannot honour (gateway/openai/wire.py WHY_UNSUPPORTED): the field's
    # name stays as sent, each reason is catalogued.
    "application_answers_knowledge_base_calls_no": Message(
        "an application answers from its knowledge base and calls no functions",
        "应用依据知识库作答，不调用函数",
    ),
    "application_answers_knowledge_base_calls_no_2": Message(
        "an application answers from its knowledge base and calls no tools",
        "应用依据知识库作答，不调用工具",
    ),
    "application_answers_text_only": Message(
        "an application answers in text only",
        "应用只以文本作答",
    ),
    "application_answers_text_only_modalities_may": Message(
        'an application answers in text only: modalities may only be ["text"]',
        "应用只以文本作答：输出模态只能是文本",
    ),
    "application_calls_no_functions_only_none": Message(
        'an application calls no functions: only "none" or "auto" is accepted',
        "应用不调用函数：只接受“不调用”或“自动”",
    ),
    "application_calls_no_tools_only_none": Message(
        'an application calls no tools: only "none" or "auto" (with no tools) is accepted',
        "应用不调用工具：只接受“不调用”或“自动”（且不提供工具）",
    ),
    "application_writes_own_answer_takes_no": Message(
        "an application writes its own answer and takes no predicted output",
        "应用自行撰写回答，不接受预测输出",
    ),
    "answer_has_no_token_probabilities": Message(
        "an answer has no token probabilities",
        "回答不带 token 概率",
    ),
    "application_answers_prose_with_citations": Message(
        'an application answers in prose with its sources, never in JSON; only {{"type": "text"}} is accepted',
        '应用以附带出处的文字作答，不输出 JSON；只接受 {{"type": "text"}}',
    ),
    "application_writes_own_answer_takes_no_bias": Message(
        "an application writes its own answer from its sources and takes no token biases",
        "应用依据资料自行撰写回答，不接受 token 偏置",
    ),
    "not_supported": Message(
        "{name} is not supported: {why_unsupported_name}",
        "不支持 {name}：{why_unsupported_name}",
    ),
    # A path or method the OpenAI base URL does not serve (gateway/openai/unknown.py); what is
    # served is catalogued.
    "application_serves_post_chat_completions_post": Message(
        "an application serves POST chat/completions, POST completions and GET models",
        "应用只提供三个接口：对话补全（POST chat/completions）、文本补全（POST）和模型列表（GET）",
    ),
    "not_served_here": Message(
        "{method} {path} is not served here: {what_is_served}",
        "这里不提供 {method} {path}：{what_is_served}",
    ),
    "not_served_use": Message(
        "{method} {path} is not served: use {served}",
        "{path} 不接受 {method} 请求：请使用 {served}",
    ),
    # The legacy text-completions request (gateway/openai/text.py); {count} is filled in by the
    # validator.
    "send_one_prompt_question_not_application": Message(
        "send one prompt (the question), not {count}: an application answers one question per request",
        "请只发送一条提示（即问题），而不是 {count} 条：应用每次请求只回答一个问题",
    ),
    "prompt_empty_question": Message(
        "the prompt is empty, and it is the question",
        "提示为空，而它就是要问的问题",
    ),
    "prompt_must_be_text_question_token": Message(
        "the prompt must be text, the question; token ids are not read",
        "提示须为文本，即要问的问题；不读取 token ID",
    ),
}
