"""The gateway's half of the one permission table (``kbcore.permissions``): every route a request
matches is looked up in ``ROUTES`` and checked before its handler runs (``route_check.permitted``, an
application-wide dependency), and the principal it resolves goes to the retrieval service with
every call (docs/access.md, People and roles)."""
