"""N-gram statistics: per-document PMI n-grams, marking, sampling and the corpus-level LM (docs/method.md §2)."""
