"""Messages about why an uploaded file cannot be taken in."""

from __future__ import annotations

from kbcore.words.messages.message import Message

MESSAGES: dict[str, Message] = {
    "web_page_has_no_readable_content": Message(
        "the web page has no readable content",
        "网页没有可读取的正文",
    ),
    "unsupported_file_type_upload_md_markdown": Message(
        "unsupported file type {filename}: upload a .md, .markdown or .txt file",
        "不支持的文件类型 {filename}：请上传 .md、.markdown 或 .txt 文件",
    ),
    "cannot_be_read_damaged_uses_feature": Message(
        "{filename} cannot be read: it is damaged or uses a feature the parser does not handle",
        "无法读取 {filename}：文件已损坏，或用到了解析器不支持的功能",
    ),
    "contains_no_text": Message(
        "{filename} contains no text",
        "{filename} 中没有文字",
    ),
    "has_compressed_stream_unpacks_more_mib": Message(
        "{filename} has a compressed stream that unpacks to more than {limits_max_stream_bytes_20} MiB: it is too large or a decompression bomb; the operator's limit is KB_PARSE_MAX_STREAM_MB",
        "{filename} 中有一个压缩流解压后超过 {limits_max_stream_bytes_20} MiB：文件过大，或是解压炸弹；运营者设置的上限是 KB_PARSE_MAX_STREAM_MB",
    ),
    "has_more_rows_paragraphs_document_may": Message(
        "{filename} has more rows than the {budget} paragraphs a document may have left (each row is one); split the sheet or ask the operator to raise KB_INGEST_MAX_PARAGRAPHS",
        "{filename} 的行数超过了文档还能容纳的 {budget} 个段落（每行一个段落）：请拆分工作表，或请运营者调高 KB_INGEST_MAX_PARAGRAPHS",
    ),
    "has_no_text_layer_looks_scanned": Message(
        "{filename} has no text layer: it looks scanned (pages are images); run it through OCR to add a text layer, then upload it again",
        "{filename} 没有文字层，看起来是扫描件（页面都是图片）：请先用 OCR 加上文字层，再重新上传",
    ),
    "has_internal_parts_not_document_person": Message(
        "{filename} has {len_infos} internal parts; it is not a document a person wrote",
        "{filename} 内部有 {len_infos} 个部件，不像是人写的文档",
    ),
    "has_slides_presentation_may_have_most": Message(
        "{filename} has {slides} slides; a presentation may have at most {limits_max_pages} (split it, or ask the operator to raise KB_PARSE_MAX_PAGES)",
        "{filename} 有 {slides} 张幻灯片，一个演示文稿最多 {limits_max_pages} 张（请拆分，或请运营者调高 KB_PARSE_MAX_PAGES）",
    ),
    "holds_no_document_supported_type": Message(
        "{filename} holds no document of a supported type; {supported_types_sentence}",
        "{filename} 中没有受支持类型的文档。{supported_types_sentence}",
    ),
    "holds_documents_one_archive_may_hold": Message(
        "{filename} holds {len_chosen} documents; one archive may hold at most {limits_archive_max_files}",
        "{filename} 包含 {len_chosen} 个文档，一个压缩包最多只能包含 {limits_archive_max_files} 个",
    ),
    "archive_files_are_taken_one_one": Message(
        "{filename} is an archive: its files are taken in one by one, not as one document",
        "{filename} 是压缩包：其中的文件会逐个导入，而不是作为一个文档",
    ),
    "damaged_cannot_be_opened_zip_archive": Message(
        "{filename} is damaged: it cannot be opened as a zip archive",
        "{filename} 已损坏：无法作为 zip 压缩包打开",
    ),
    "damaged_cannot_be_read_pdf": Message(
        "{filename} is damaged: it cannot be read as a PDF",
        "{filename} 已损坏：无法作为 PDF 读取",
    ),
    "damaged_cannot_be_read_powerpoint_deck": Message(
        "{filename} is damaged: it cannot be read as a PowerPoint deck",
        "{filename} 已损坏：无法作为 PowerPoint 演示文稿读取",
    ),
    "damaged_cannot_be_read_word_document": Message(
        "{filename} is damaged: it cannot be read as a Word document",
        "{filename} 已损坏：无法作为 Word 文档读取",
    ),
    "damaged_cut_short_corrupt_cannot_be": Message(
        "{filename} is damaged: it is cut short or corrupt and cannot be opened",
        "{filename} 已损坏：文件不完整或已损坏，无法打开",
    ),
    "empty": Message(
        "{filename} is empty",
        "{filename} 为空",
    ),
    "encrypted_password_protected_remove_password_upload": Message(
        "{filename} is encrypted (password-protected); remove the password and upload it again",
        "{filename} 已加密（有密码保护），请去掉密码后重新上传",
    ),
    "neither_utf_8_nor_gb18030_text": Message(
        "{filename} is neither UTF-8 nor GB18030 text",
        "{filename} 既不是 UTF-8 文本，也不是 GB18030 文本",
    ),
    "not_utf_8_text_byte_cannot": Message(
        "{filename} is not UTF-8 text (byte {exc_start} cannot be decoded)",
        "{filename} 不是 UTF-8 文本（位置 {exc_start} 的字节无法解码）",
    ),
    "not_supported_type": Message(
        "{filename} is not a supported type; {supported_types_sentence}",
        "{filename} 不是受支持的类型。{supported_types_sentence}",
    ),
    "looks_like_binary_file_not_text": Message(
        "{filename} looks like a binary file, not text",
        "{filename} 看起来是二进制文件，不是文本",
    ),
    # A document's text counted while it is read and split (services/retrieval/ingestion/parsing/document.py TextBudget).
    "has_more_characters_text_most_one": Message(
        "{filename} has more than {limit} characters of text, the most one document may have: split it into smaller files or ask the operator to raise KB_PARSE_MAX_CHARS",
        "{filename} 的文字超过 {limit} 个字符，已超出一个文档的上限：请拆分成更小的文件，或请运营者调高 KB_PARSE_MAX_CHARS",
    ),
    "has_more_lines_text_most_one": Message(
        "{filename} has more than {limit} lines of text, the most one document may have: split it into smaller files or ask the operator to raise KB_PARSE_MAX_LINES",
        "{filename} 的文字超过 {limit} 行，已超出一个文档的上限：请拆分成更小的文件，或请运营者调高 KB_PARSE_MAX_LINES",
    ),
    "makes_more_paragraphs_most_one_document": Message(
        "{filename} makes more than {limit} paragraphs, the most one document may have: split it into smaller files or ask the operator to raise KB_INGEST_MAX_PARAGRAPHS",
        "{filename} 切分后超过 {limit} 个段落，已超出一个文档的上限：请拆分成更小的文件，或请运营者调高 KB_INGEST_MAX_PARAGRAPHS",
    ),
    # A parse or a whole ingestion job past its wall-clock bound (parsing/document.py PAST_WALL_CLOCK).
    "took_more_seconds_wall_clock_time": Message(
        "{filename} took more than {seconds} seconds of wall-clock time to take in: it is too large, built to stall a parser, or the service was too busy; split it, or ask the operator to raise KB_INGEST_JOB_SECONDS",
        "导入 {filename} 用时超过 {seconds} 秒：文件过大、是专门拖住解析器的文件，或服务过于繁忙；请拆分，或请运营者调高 KB_INGEST_JOB_SECONDS",
    ),
    "takes_more_cpu_seconds_parse_too": Message(
        "{filename} takes more than {limits_cpu_seconds} CPU seconds to parse: it is too large or built to stall a parser; split it, or ask the operator to raise KB_PARSE_CPU_SECONDS",
        "解析 {filename} 需要超过 {limits_cpu_seconds} 秒 CPU 时间：文件过大，或是专门拖住解析器的文件；请拆分，或请运营者调高 KB_PARSE_CPU_SECONDS",
    ),
    "unpacks_more_mib_content_too_large": Message(
        "{filename} unpacks to more than {limits_archive_max_bytes_20} MiB of content: it is too large or a decompression bomb; the operator's limit is KB_ARCHIVE_MAX_MB",
        "{filename} 解压后的内容超过 {limits_archive_max_bytes_20} MiB：文件过大，或是解压炸弹；运营者设置的上限是 KB_ARCHIVE_MAX_MB",
    ),
    "unpacks_more_too_large_zip_bomb": Message(
        "{filename} unpacks to more than {mib_limits_archive_max_bytes}: it is too large or a zip bomb",
        "{filename} 解压后超过 {mib_limits_archive_max_bytes}：文件过大，或是压缩炸弹",
    ),
    "unpacks_one_archive_may_unpack_most": Message(
        "{filename} unpacks to {mib_declared}; one archive may unpack to at most {mib_limits_archive_max_bytes}",
        "{filename} 解压后有 {mib_declared}，一个压缩包解压后最多 {mib_limits_archive_max_bytes}",
    ),
    "holds_encrypted_file_upload_unencrypted": Message(
        "{inflation_filename} holds an encrypted file ({info_filename}); upload it unencrypted",
        "{inflation_filename} 中有加密的文件（{info_filename}），请上传未加密的版本",
    ),
    "damaged_cannot_be_unpacked": Message(
        "{inflation_filename} is damaged: {info_filename} cannot be unpacked",
        "{inflation_filename} 已损坏：无法解压其中的 {info_filename}",
    ),
    "has_paragraphs_limit_kb_ingest_max": Message(
        "{job_filename} has {len_paragraphs} paragraphs; the limit is {limits_max_paragraphs} (KB_INGEST_MAX_PARAGRAPHS)",
        "{job_filename} 有 {len_paragraphs} 个段落，上限是 {limits_max_paragraphs} 个（KB_INGEST_MAX_PARAGRAPHS）",
    ),
    "damaged_not_readable_sheet": Message(
        "{self__filename} is damaged: {self__part} is not a readable sheet",
        "{self__filename} 已损坏：{self__part} 不是可读取的工作表",
    ),
    "spans_more_cells_rows_columns_sheets": Message(
        "{self__filename} spans more than {self__limit} cells (rows × columns of its sheets, counted from its first to its last cell): delete the empty rows and columns far from the data, split the workbook, or ask the operator to raise KB_PARSE_MAX_CELLS",
        "{self__filename} 的范围超过 {self__limit} 个单元格（各工作表从第一个到最后一个单元格的行数 × 列数）：请删除远离数据的空行和空列、拆分工作簿，或请运营者调高 KB_PARSE_MAX_CELLS",
    ),
    "has_part_unpacks_more_too_large": Message(
        "{self_filename} has a part ({part}) that unpacks to more than {mib_self_per_part}: it is too large or a zip bomb; the operator's limit is KB_PARSE_MAX_STREAM_MB",
        "{self_filename} 中的部件 {part} 解压后超过 {mib_self_per_part}：文件过大，或是压缩炸弹；运营者设置的上限是 KB_PARSE_MAX_STREAM_MB",
    ),
    "has_part_unpacks_more_times_packed": Message(
        "{self_filename} has a part ({part}) that unpacks to more than {self_max_ratio} times its packed size: that is a zip bomb, not a document (the operator's limit is KB_ARCHIVE_MAX_RATIO)",
        "{self_filename} 中的部件 {part} 解压后超过压缩大小的 {self_max_ratio} 倍：这是压缩炸弹，不是文档（运营者设置的上限是 KB_ARCHIVE_MAX_RATIO）",
    ),
    "unpacks_more_limit_passed_too_large": Message(
        "{self_filename} unpacks to more than its limit (it passed it at {part}): it is too large or a zip bomb; the operator's limit is KB_ARCHIVE_MAX_MB",
        "{self_filename} 解压后超过了上限（解压到 {part} 时超出）：文件过大，或是压缩炸弹；运营者设置的上限是 KB_ARCHIVE_MAX_MB",
    ),
    # A PDF's page count, counted or only bounded (services/retrieval/ingestion/parsing/pdf.py
    # _too_many_pages): both sentences.
    "has_more_pages_pdf_may_have": Message(
        "{filename} has more than {limits_max_pages} pages; a PDF may have at most {limits_max_pages2} (split it, or ask the operator to raise KB_PARSE_MAX_PAGES)",
        "{filename} 超过 {limits_max_pages} 页，一个 PDF 最多 {limits_max_pages2} 页（请拆分，或请运营者调高 KB_PARSE_MAX_PAGES）",
    ),
    "has_pages_pdf_may_have_most": Message(
        "{filename} has {pages} pages; a PDF may have at most {limits_max_pages} (split it, or ask the operator to raise KB_PARSE_MAX_PAGES)",
        "{filename} 有 {pages} 页，一个 PDF 最多 {limits_max_pages} 页（请拆分，或请运营者调高 KB_PARSE_MAX_PAGES）",
    ),
    # The parser out of memory (services/retrieval/ingestion/parsing/confined/sandbox.py and child.py,
    # MEMORY_REFUSED): both sentences.
    "needs_more_memory_parsing_one_file": Message(
        "{filename} needs more memory than parsing one file may use (the operator's limit is KB_PARSE_MEMORY_MB)",
        "{filename} 需要的内存超过了解析单个文件的上限（运营者设置的上限是 KB_PARSE_MEMORY_MB）",
    ),
    "needs_more_memory_parsing_one_file_2": Message(
        "{filename} needs more memory than parsing one file may use ({limits_memory_mb} MiB), or is damaged in a way that stops the parser; the operator's limit is KB_PARSE_MEMORY_MB",
        "{filename} 需要的内存超过了解析单个文件的上限（{limits_memory_mb} MiB），或已损坏到解析器无法继续；运营者设置的上限是 KB_PARSE_MEMORY_MB",
    ),
    # A question-and-answer sheet's row, named by file, sheet and row
    # (services/retrieval/ingestion/parsing/sheets.py).
    "sheet_row_has_question_characters_question": Message(
        "{filename}, sheet {name_or_1}, row {number}, has a question of {len_too_long} characters; a question is at most {max_question_chars}",
        "{filename} 的工作表 {name_or_1} 第 {number} 行有一个问题长 {len_too_long} 个字符，问题最多 {max_question_chars} 个字符",
    ),
    "sheet_row_has_questions_paragraph_takes": Message(
        "{filename}, sheet {name_or_1}, row {number}, has {len_questions} questions; a paragraph takes at most {max_questions_per_paragraph}",
        "{filename} 的工作表 {name_or_1} 第 {number} 行有 {len_questions} 个问题，一个段落最多关联 {max_questions_per_paragraph} 个",
    ),
    # {exc} stays English: the spreadsheet or CSV reader's own words.
    "damaged_cannot_be_read_spreadsheet": Message(
        "{filename} is damaged: it cannot be read as a spreadsheet ({exc})",
        "{filename} 已损坏：无法作为电子表格读取（{exc}）",
    ),
    "not_valid_csv": Message(
        "{filename} is not valid CSV: {exc}",
        "{filename} 不是有效的 CSV：{exc}",
    ),
    # What a file's content was found to be (services/retrieval/ingestion/parsing/sniff.py): the
    # sentence, and each description it can hold.
    "gif_image": Message(
        "a GIF image",
        "GIF 图片",
    ),
    "jpeg_image": Message(
        "a JPEG image",
        "JPEG 图片",
    ),
    "pdf": Message(
        "a PDF",
        "PDF 文件",
    ),
    "png_image": Message(
        "a PNG image",
        "PNG 图片",
    ),
    "powerpoint_deck_pptx": Message(
        "a PowerPoint deck (.pptx)",
        "PowerPoint 演示文稿（.pptx）",
    ),
    "word_document_docx": Message(
        "a Word document (.docx)",
        "Word 文档（.docx）",
    ),
    "binary_file": Message(
        "a binary file",
        "二进制文件",
    ),
    "bitmap_image": Message(
        "a bitmap image",
        "位图图片",
    ),
    "zip_archive": Message(
        "a zip archive",
        "zip 压缩包",
    ),
    "excel_workbook_xlsx": Message(
        "an Excel workbook (.xlsx)",
        "Excel 工作簿（.xlsx）",
    ),
    "old_binary_office_file_xls_doc": Message(
        "an old binary Office file (.xls/.doc/.ppt)",
        "旧版二进制 Office 文件（.xls/.doc/.ppt）",
    ),
    "named_but_content_text_rename_upload": Message(
        "{filename} is named as {announced_upper} but its content is text; rename it or upload the right file",
        "{filename} 的扩展名是 {announced_upper}，但内容是文本：请改名，或上传正确的文件",
    ),
    "named_but_content_rename_upload_right": Message(
        "{filename} is named as {announced_upper} but its content is {found}; rename it or upload the right file",
        "{filename} 的扩展名是 {announced_upper}，但内容是 {found}：请改名，或上传正确的文件",
    ),
    "plain_text": Message(
        "text",
        "文本",
    ),
}
