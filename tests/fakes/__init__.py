"""Real local stand-ins for remote services, so tests exercise the real clients against them."""
