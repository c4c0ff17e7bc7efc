"""Work on an uploaded file done in a child process of its own, under limits of its own: the
request-time checks (``check_sandbox`` starting ``check_child``) and the parse (``sandbox``
starting ``child``). Whatever a file does to a parser library ends there."""
