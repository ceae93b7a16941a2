"""What the stages need from the model runtimes; scripted fakes in tests implement the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    name: str

    @property
    def dimension(self) -> int: ...

    @property
    def fingerprint(self) -> dict: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...
