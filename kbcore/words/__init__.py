"""What people read, in Chinese and English: which language a caller reads (``language``), every
refusal's and stored failure's message by code (``messages``), words as they travel (``said``:
a code and its values) and as they are shown (``shown``). The pages' and the CLI's words are in
``gateway.labels``; docs/languages.md says how a language is chosen and how to add words."""
