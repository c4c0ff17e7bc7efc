"""Messages about datasets, documents, paragraphs and their questions."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "zip_holds_several_documents_preview_files": Message(
        "a .zip holds several documents: preview its files one at a time",
        ".zip 压缩包包含多个文档：请逐个预览其中的文件",
    ),
    "document_given_paragraphs_needs_name": Message(
        "a document given as paragraphs needs a name",
        "以段落提交的文档需要有名称",
    ),
    "paragraph_needs_content": Message(
        "a paragraph needs content",
        "段落需要有内容",
    ),
    "paragraph_content_limited_characters": Message(
        "a paragraph's content is limited to {max_paragraph_content_chars} characters",
        "段落内容最多 {max_paragraph_content_chars} 个字符",
    ),
    "paragraph_title_limited_characters": Message(
        "a paragraph's title is limited to {max_paragraph_title_chars} characters",
        "段落标题最多 {max_paragraph_title_chars} 个字符",
    ),
    "question_limited_characters_one_has": Message(
        "a question is limited to {max_question_chars} characters; this one has {len_text}",
        "问题最多 {max_question_chars} 个字符，当前有 {len_text} 个",
    ),
    "question_needs_some_text": Message(
        "a question needs some text",
        "问题不能为空",
    ),
    "separator_must_have_1_characters": Message(
        "a separator must have 1 to {max_separator_chars} characters: {separator_40}",
        "分隔符须为 1 到 {max_separator_chars} 个字符：{separator_40}",
    ),
    "archive_holds_several_documents_submit_submitdocuments": Message(
        "an archive holds several documents: submit it with SubmitDocuments",
        "压缩包包含多个文档：请用 SubmitDocuments 提交",
    ),
    "most_separators_not": Message(
        "at most {max_separators} separators, not {len_self_separators}",
        "分隔符最多 {max_separators} 个，当前有 {len_self_separators} 个",
    ),
    "most_documents_can_be_named_one": Message(
        "at most {max_synced_documents} documents can be named in one sync",
        "一次同步最多指定 {max_synced_documents} 个文档",
    ),
    "dataset_description_longer_characters": Message(
        "dataset description is longer than {max_description_chars} characters",
        "知识库描述不能超过 {max_description_chars} 个字符",
    ),
    "dataset_id_taken_choose_another_leave": Message(
        "dataset id {dataset_id} is taken: choose another or leave it empty",
        "知识库 ID {dataset_id} 已被占用：请换一个，或留空",
    ),
    "dataset_name_longer_characters": Message(
        "dataset name is longer than {max_name_chars} characters",
        "知识库名称不能超过 {max_name_chars} 个字符",
    ),
    "dataset_name_must_not_be_empty": Message(
        "dataset name must not be empty",
        "知识库名称不能为空",
    ),
    "dataset_does_not_exist": Message(
        "dataset {dataset_id} does not exist",
        "知识库 {dataset_id} 不存在",
    ),
    "dataset_has_documents_being_ingested_change": Message(
        "dataset {dataset_name} has documents being ingested; change its embedding model once they are ready",
        "知识库 {dataset_name} 中有文档正在导入，导入完成后再更换向量模型",
    ),
    "dataset_already_being_embedded_again_another": Message(
        "dataset {dataset_name} is already being embedded again by another model; cancel that first (choose its current model again) or wait for it to finish",
        "知识库 {dataset_name} 正在用另一个模型重新向量化：请先取消（重新选择它当前的模型），或等它完成",
    ),
    "dataset_being_embedded_again_another_model": Message(
        "dataset {dataset_name} is being embedded again by another model; change it once that has finished",
        "知识库 {dataset_name} 正在用另一个模型重新向量化，完成后再修改",
    ),
    "dataset_being_embedded_again_another_model_2": Message(
        "dataset {dataset_name} is being embedded again by another model; upload once that has finished",
        "知识库 {dataset_name} 正在用另一个模型重新向量化，完成后再上传",
    ),
    "dataset_id_must_not_be_empty": Message(
        "dataset_id must not be empty",
        "dataset_id 不能为空",
    ),
    "document_name_longer_characters": Message(
        "document name is longer than {max_name_chars} characters",
        "文档名称不能超过 {max_name_chars} 个字符",
    ),
    "document_does_not_exist_dataset": Message(
        "document {document_id} does not exist in dataset {dataset_id}",
        "知识库 {dataset_id} 中没有文档 {document_id}",
    ),
    "document_has_no_ingestion_queued_running": Message(
        "document {document_name} has no ingestion queued or running to cancel",
        "文档 {document_name} 没有排队中或进行中的导入可以取消",
    ),
    "document_has_no_searchable_version_change": Message(
        "document {document_name} has no searchable version to change",
        "文档 {document_name} 没有可检索的版本可供修改",
    ),
    "document_being_ingested_paragraphs_can_be": Message(
        "document {document_name} is being ingested; its paragraphs can be changed once it is ready",
        "文档 {document_name} 正在导入，导入完成后才能修改它的段落",
    ),
    "document_was_not_imported_web_page": Message(
        "document {not_web_0} was not imported from a web page: upload its file again instead",
        "文档 {not_web_0} 不是从网页导入的：请改为重新上传它的文件",
    ),
    "document_still_being_ingested_wait_finish": Message(
        "document {upload_name} is still being ingested; wait for it to finish or cancel it before uploading it again",
        "文档 {upload_name} 仍在导入：请等它完成，或先取消，再重新上传",
    ),
    "give_document_paragraphs_file_web_page": Message(
        "give the document as paragraphs, as a file or as a web page address",
        "请以段落、文件或网页地址的形式提交文档",
    ),
    "max_length_must_be_between_characters": Message(
        "max_length must be between {min_max_length} and {max_max_length} characters, not {self_max_length}",
        "max_length 须在 {min_max_length} 到 {max_max_length} 个字符之间，当前为 {self_max_length}",
    ),
    "overlap_must_be_between_0_half": Message(
        "overlap must be between 0 and half of max_length ({self_max_length_2}), not {self_overlap}",
        "重叠字数须在 0 到 max_length 的一半（{self_max_length_2}）之间，当前为 {self_overlap}",
    ),
    "paragraph_does_not_exist": Message(
        "paragraph {paragraph_id} does not exist",
        "段落 {paragraph_id} 不存在",
    ),
    "paragraph_does_not_exist_document": Message(
        "paragraph {paragraph_id} does not exist in document {document_id}",
        "文档 {document_id} 中没有段落 {paragraph_id}",
    ),
    "question_does_not_exist": Message(
        "question {question_id} does not exist",
        "问题 {question_id} 不存在",
    ),
    "question_does_not_exist_dataset": Message(
        "question {question_id} does not exist in this dataset",
        "这个知识库中没有问题 {question_id}",
    ),
    "separator_only_spaces_would_cut_between": Message(
        "separator {separator} is only spaces: it would cut between almost any two words",
        "分隔符 {separator} 只有空格：几乎会在任意两个词之间切分",
    ),
    "split_rules_cut_file_page_paragraphs": Message(
        "split rules cut a file or a page: paragraphs sent are kept as they are",
        "分段规则只用于切分文件或网页：直接提交的段落会保持原样",
    ),
    "sync_hours_must_be_0_no": Message(
        "sync_hours must be 0 (no schedule) or between {min_sync_hours} and {max_sync_hours} hours, not {hours}",
        "sync_hours 须为 0（不定时同步），或在 {min_sync_hours} 到 {max_sync_hours} 小时之间，当前为 {hours}",
    ),
    "document_has_no_paragraph_content": Message(
        "the document has no paragraph with content",
        "文档中没有包含内容的段落",
    ),
    "document_needs_name": Message(
        "the document needs a name",
        "文档需要有名称",
    ),
    "file_needs_name_suffix_says_what": Message(
        "the file needs a name: its suffix says what type it is",
        "文件需要有名称：要靠扩展名判断它的类型",
    ),
    "ingestion_document_was_cancelled_while_request": Message(
        "the ingestion of document {row_name} was cancelled while this request waited for it",
        "在这次请求等待期间，文档 {row_name} 的导入被取消了",
    ),
    "paragraph_already_has_questions_most_one": Message(
        "this paragraph already has {max_questions_per_paragraph} questions, the most one can have: edit or detach one first",
        "这个段落已关联 {max_questions_per_paragraph} 个问题，已达上限：请先修改或移除一个",
    ),
    "title_levels_must_be_between_1": Message(
        "title_levels must be between 1 and {max_title_levels}, not {self_title_levels}",
        "title_levels 须在 1 到 {max_title_levels} 之间，当前为 {self_title_levels}",
    ),
    "holds_no_file_supported_type": Message(
        "{filename} holds no file of a supported type",
        "{filename} 中没有受支持类型的文件",
    ),
    # {row_error} is the document's own failure, itself a catalogued sentence (see Document files
    # and Web pages).
    "document_could_not_be_ingested": Message(
        "document {row_name} could not be ingested: {row_error}",
        "文档 {row_name} 导入失败：{row_error}",
    ),
    # {listed} stays English (the other datasets' names); the two model labels are catalogued below
    # (Models).
    "dataset_searched_together_application_all_changing": Message(
        "dataset {dataset_name} is searched together with {listed} by application {application_name}, all on {model_label_dataset_embedding_model_id_model_name_if_model_else}: changing only this dataset to {change_label} would mix embedding models in one application; take it out of the application first",
        "应用 {application_name} 会把知识库 {dataset_name} 与 {listed} 一起检索，它们都使用{model_label_dataset_embedding_model_id_model_name_if_model_else}：只把这个知识库改为{change_label}，会让同一个应用混用不同的向量模型。请先把它移出这个应用",
    ),
}
