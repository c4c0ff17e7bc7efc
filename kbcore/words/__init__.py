"""What people read, in Chinese and English: which language a caller reads (``language``), and
the refusals' words in both (``refusal_words``). The pages' and the CLI's words are in
``gateway.labels``; docs/languages.md says how a language is chosen and how to add words."""
