"""What both sides of the chat service's credentials stand on: who the caller of a call is, how
a secret is kept (its SHA-256), how an expiry is read, and the database's rate windows.

``services.chat.access`` resolves every token to a caller, a user's sessions and personal tokens
included, so it imports ``services.chat.accounts``; the accounts need the caller, the digests,
the expiries and the windows too, and find them here rather than in ``access``, so the two
packages depend one way (import-linter checks it)."""
