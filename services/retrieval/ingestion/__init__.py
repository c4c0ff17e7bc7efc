"""Turning an uploaded file into searchable paragraphs: parsing, splitting, building a version, and the jobs that run it."""
