"""Vector arithmetic that the bank's vector tables share (the int8 codes, the vector sum and
their migrations): plain numpy, no SQL, and no import of another store module, so that
``schema`` and ``int8_matrix`` can both use it without importing each other."""

from __future__ import annotations

import numpy as np


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1, in float64 (a zero row stays zero)."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
