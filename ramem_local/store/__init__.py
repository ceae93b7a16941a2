"""The bank: one SQLite file (apsw + sqlite-vec + FTS5). All SQL of the project lives here."""

from ..errors import StoreError
from .bank import EmbedderFingerprint, Store, StoredTurn, turn_key
from .forgetting import ForgetPlan, TimelineRow
from .retrieval_sql import NEIGHBOUR_WEIGHT, RankedRow

__all__ = [
    "NEIGHBOUR_WEIGHT", "EmbedderFingerprint", "ForgetPlan", "RankedRow", "Store", "StoreError",
    "StoredTurn", "TimelineRow", "turn_key",
]
