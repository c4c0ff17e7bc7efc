"""A dataset's documents beyond the dataset routes themselves: their paragraphs as an operator
manages them, and how a file is cut into paragraphs (the split preview and its rules)."""
