"""The bank: one SQLite file (apsw + sqlite-vec + FTS5). All SQL of the project lives here."""

from .bank import EmbedderFingerprint, Store, StoredTurn, StoreError, turn_key
from .retrieval_sql import NEIGHBOUR_WEIGHT, RankedRow

__all__ = [
    "NEIGHBOUR_WEIGHT", "EmbedderFingerprint", "RankedRow", "Store", "StoreError", "StoredTurn",
    "turn_key",
]
