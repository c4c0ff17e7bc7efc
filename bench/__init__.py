"""Benchmarks: ``make bench`` (``python -m bench``) prints medians and ratios from one run."""
