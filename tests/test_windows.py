"""Planning extraction windows over a conversation's turns (ingest/windows.py)."""

from __future__ import annotations

import pytest

from ramem_local.ingest.windows import plan_new_windows, plan_windows


@pytest.mark.parametrize(
    ("n_turns", "size", "overlap", "windows"),
    [
        (0, 40, 2, []),
        (1, 40, 2, [(0, 1)]),
        (40, 40, 2, [(0, 40)]),
        (41, 40, 2, [(0, 40), (38, 41)]),  # the last window may be short
        (100, 40, 2, [(0, 40), (38, 78), (76, 100)]),
        (5, 2, 0, [(0, 2), (2, 4), (4, 5)]),
        (7, 4, 1, [(0, 4), (3, 7)]),  # no window of repeated turns only
        (4, 2, 1, [(0, 2), (1, 3), (2, 4)]),
    ],
)
def test_plan_windows(n_turns, size, overlap, windows):
    assert plan_windows(n_turns, size, overlap) == windows


@pytest.mark.parametrize(("size", "overlap"), [(2, 2), (2, 3), (0, 0), (5, -1)])
def test_plan_windows_refuses_overlap_not_smaller_than_size(size, overlap):
    with pytest.raises(ValueError, match="greater than the overlap"):
        plan_windows(10, size, overlap)


def test_planning_is_incremental_new_turns_start_overlap_back():
    ids = list(range(100, 141))  # 41 turns
    first = plan_new_windows(ids, [], 40, 2)
    assert first == [(100, 139, 40), (138, 140, 3)]
    recorded = [(a, b) for a, b, _ in first]
    assert plan_new_windows(ids, recorded, 40, 2) == []  # idempotent
    grown = ids + list(range(141, 150))  # 9 turns added later
    assert plan_new_windows(grown, recorded, 40, 2) == [(139, 149, 11)]
