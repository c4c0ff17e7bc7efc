"""One question end to end: checks, lease, record, context, retrieval, the model's answer, saving, stopping."""
