"""What every part of the store shares: its error and its clock."""

from __future__ import annotations

import time

from ..errors import BankError


class StoreError(BankError):
    """A problem with the bank file, reported as one readable line."""


def now() -> int:
    """Unix seconds, for created_at / updated_at columns."""
    return int(time.time())
