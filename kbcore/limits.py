"""Fixed limits of the behaviour we reproduce (seed §9); configurable ones are in settings."""

MAX_QUESTION_TOKENS = 4000
MAX_SEARCH_QUERY_CHARS = 1000
MAX_NAME_CHARS = 200
