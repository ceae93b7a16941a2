"""Extraction windows: which turns go to the LLM together, and which windows are done.

A window is a run of consecutive turns of one conversation in time order (``W`` turns, the
last ``O`` of them repeated at the start of the next window so that a fact told across the
boundary is seen whole once). Windows are recorded in ``extraction_windows`` by their first and
last turn id, with a status (pending / done / failed), the number of attempts, the last error,
the model and the prompt version. Planning is idempotent and incremental: turns already covered
by a recorded window are not planned again, so re-running skips done windows, a failed window
stays visible (and retryable), and turns added later get windows of their own that start
``O`` turns back.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..store import Store
from ..types import ExtractionWindow, Turn

# An ingest with an LLM extracts at once only up to this many pending windows (a journal
# entry, one chat: a few minutes with a 4B model on a laptop); more are queued for
# `ramem extract`, so that an import never blocks for hours on the model.
INLINE_EXTRACTION_WINDOWS = 5

DEFAULT_SIZE = 40
DEFAULT_OVERLAP = 2

PENDING, DONE, FAILED = "pending", "done", "failed"


def plan_windows(
    n_turns: int, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP
) -> list[tuple[int, int]]:
    """Half-open index ranges ``[start, end)`` over ``n_turns`` turns.

    Each window holds ``size`` turns and starts ``overlap`` turns before the previous one
    ended; the last window may be short. No window holds only repeated (overlap) turns.

    >>> plan_windows(5, size=2, overlap=0)
    [(0, 2), (2, 4), (4, 5)]
    >>> plan_windows(7, size=4, overlap=1)
    [(0, 4), (3, 7)]
    """
    _check(size, overlap)
    if n_turns < 0:
        raise ValueError(f"n_turns must be >= 0, not {n_turns}")
    windows: list[tuple[int, int]] = []
    start = 0
    while start < n_turns:
        end = min(start + size, n_turns)
        windows.append((start, end))
        if end == n_turns:
            break
        start = end - overlap
    return windows


def _check(size: int, overlap: int) -> None:
    if not size > overlap >= 0:
        raise ValueError(
            f"window size must be greater than the overlap, and the overlap >= 0 "
            f"(got size={size}, overlap={overlap})"
        )


def plan_new_windows(
    turn_ids: Sequence[int],
    recorded: Sequence[tuple[int, int]],
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> list[tuple[int, int, int]]:
    """Windows ``(first_turn_id, last_turn_id, turn_count)`` for turns no recorded window covers.

    ``turn_ids`` is the conversation in time order; ``recorded`` the ``(first, last)`` turn ids
    of windows already in the bank. Each uncovered run of turns is planned with
    :func:`plan_windows`, starting ``overlap`` turns before the run (the context the previous
    window ended with). With nothing recorded this is exactly ``plan_windows(len(turn_ids))``.
    """
    _check(size, overlap)
    position = {turn_id: index for index, turn_id in enumerate(turn_ids)}
    covered = [False] * len(turn_ids)
    for first, last in recorded:
        if first in position and last in position:
            for index in range(position[first], position[last] + 1):
                covered[index] = True
    planned: list[tuple[int, int, int]] = []
    index = 0
    while index < len(turn_ids):
        if covered[index]:
            index += 1
            continue
        run_end = index
        while run_end < len(turn_ids) and not covered[run_end]:
            run_end += 1
        start = max(0, index - overlap)
        for a, b in plan_windows(run_end - start, size, overlap):
            planned.append((turn_ids[start + a], turn_ids[start + b - 1], b - a))
        index = run_end
    return planned


def ensure_windows(
    store: Store,
    conversation_id: int,
    turns: Sequence[Turn],
    *,
    prompt_version: str,
    size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> int:
    """Record the windows that ``turns`` (the conversation, in time order) still need.

    Idempotent: a second call records nothing. Returns the number of windows added.
    """
    turn_ids = [t.id for t in turns if t.id is not None]
    recorded = [
        (w.first_turn_id, w.last_turn_id)
        for w in store.extraction_windows(conversation_id, prompt_version=prompt_version)
    ]
    planned = plan_new_windows(turn_ids, recorded, size, overlap)
    if not planned:
        return 0
    with store.atomic():
        return store.add_extraction_windows(conversation_id, planned, prompt_version)


def windows_of(
    store: Store,
    conversation_id: int | None = None,
    *,
    prompt_version: str | None = None,
    statuses: Sequence[str] | None = None,
) -> list[ExtractionWindow]:
    """Recorded windows, oldest first."""
    return store.extraction_windows(conversation_id, prompt_version=prompt_version,
                                    statuses=statuses)


def window_turns(window: ExtractionWindow, turns: Sequence[Turn]) -> list[Turn]:
    """The turns of ``window`` within the conversation's time-ordered ``turns``."""
    ids = [t.id for t in turns]
    try:
        first, last = ids.index(window.first_turn_id), ids.index(window.last_turn_id)
    except ValueError:
        return []
    return list(turns[first : last + 1])
