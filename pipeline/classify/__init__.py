"""GLUE / CLUE fine-tuning (docs/method.md §4): task readers, heads, metrics, seeds, submissions."""
