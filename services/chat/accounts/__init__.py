"""User accounts of the people who operate the knowledge base: passwords, sessions, personal
tokens and one-time sign-in links, roles and grants, and the administrator's user management
(docs/access.md describes the roles). Who a call's token names is resolved by
``services.chat.access.caller_interceptor``; what each role may do is ``kbcore.permissions``."""
