"""Text as every part handles it: word segmentation, token counts, and what a store can hold."""
