"""Who may call and what they may touch: API keys, share links, visitors, and the rules per chat and application."""
