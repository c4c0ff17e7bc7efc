"""Every application as an OpenAI endpoint: the wire formats (chat and legacy text
completions), the question they ask, their routes, and OpenAI-shaped answers for OpenAI's paths
the gateway does not serve (docs/api/openai.md)."""
