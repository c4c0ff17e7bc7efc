"""The operator's work: the conversation log, votes and usage, the knowledge-gap report, improved answers, models."""
