"""Fine-tuning (docs/method.md §4): the twin structure of *BURT: BERT inspired Universal Representation
from Twin Structure* §3 (Siamese NLI + PPDB multi-task) and SBERT-style NLI, on sentence-transformers."""
