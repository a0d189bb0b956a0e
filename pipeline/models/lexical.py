"""Lexical retrieval baselines (ULR Table 4 BM25; BURT Table X TF-IDF and BM25).

Both index the candidates and score every query against all of them, over the same tokens as
:mod:`.bags`: lower-cased ``\\w+`` words in English, characters in Chinese. BM25 is ``bm25s``
(Lucene variant, k1 = 1.5, b = 0.75); TF-IDF is scikit-learn's ``TfidfVectorizer`` fitted on
the candidates (smooth idf, sublinear tf off, L2-normalised rows) with cosine scores.
"""

from __future__ import annotations

import bm25s
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from pipeline.models.bags import bag_tokens


def lexical_tokens(text: str, lang: str) -> list[str]:
    return bag_tokens(text.lower(), lang)


class BM25Scorer:
    kind = "bm25"
    pooling = None

    def __init__(self, lang: str = "en", k1: float = 1.5, b: float = 0.75):
        self.lang, self.k1, self.b = lang, k1, b

    def describe(self) -> dict:
        return {"kind": self.kind, "lang": self.lang, "k1": self.k1, "b": self.b, "bm25s": bm25s.__version__}

    def scores(self, queries: list[str], candidates: list[str]) -> np.ndarray:
        index = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        index.index([lexical_tokens(text, self.lang) for text in candidates], show_progress=False)
        return np.stack([index.get_scores(lexical_tokens(q, self.lang)) for q in queries]).astype(np.float64)


class TfidfScorer:
    kind = "tfidf"
    pooling = None

    def __init__(self, lang: str = "en"):
        self.lang = lang

    def describe(self) -> dict:
        return {"kind": self.kind, "lang": self.lang}

    def scores(self, queries: list[str], candidates: list[str]) -> np.ndarray:
        vectorizer = TfidfVectorizer(analyzer=lambda text: lexical_tokens(text, self.lang))
        docs = vectorizer.fit_transform(candidates)
        return (vectorizer.transform(queries) @ docs.T).toarray().astype(np.float64)
