"""Corpus stages: dump → docs (extract) → Simplified docs (convert, zh) → sentences (clean)."""
