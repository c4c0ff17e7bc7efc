"""``python -m cli``: ask an application, load a folder of documents and measure retrieval from
a terminal.

It speaks only the public HTTP API (the routes a browser uses), so it works against any
deployment: the answer goes to stdout as it streams, progress and errors go to stderr. Of the
server's code it uses only the words people read (``gateway.labels`` and its own,
``gateway.words.cli_words``), the settings that say where the gateway listens
(``kbcore.settings``), the language choice (``kbcore.words.language``) and the SSE parser
(``kbcore.sse_decoder``). It speaks Chinese or English, one per run (``cli.language``).
"""
