"""The words people read on the pages and in the CLI, each kept as one pair of its Chinese and
its English (``catalogue``), in one module per place they are read (``*_words``).
``gateway.labels`` puts the pages' words together and serves them in one language at a time;
``gateway.filled_pages`` writes them into the chat page and the embed script as they are served.
Nothing here reads either of them."""
