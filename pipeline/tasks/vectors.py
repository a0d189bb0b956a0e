"""Cosine similarity on embedding matrices, in float64 so that ties are real ties.

The zero vector (a bag-of-vectors text with no known word) has no direction: it is left at
zero by :func:`unit_rows`, so its cosine with anything is 0 rather than NaN.
"""

from __future__ import annotations

import numpy as np


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float64); zero rows stay zero."""
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def paired_cosine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """cos(left[i], right[i]) for every row i."""
    return np.einsum("ij,ij->i", unit_rows(left), unit_rows(right))


def cosine_matrix(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """cos(queries[i], candidates[j]) as a ``(len(queries), len(candidates))`` matrix."""
    return unit_rows(queries) @ unit_rows(candidates).T
