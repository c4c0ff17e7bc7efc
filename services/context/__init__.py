"""Context service: dialogue history by chat id, compacted into a summary over a token budget."""
