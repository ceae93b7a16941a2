"""What stands out for a count (``retrieve._standing_out``): the closest reports down to the
largest drop in closeness, read among the closest half of a short range."""

from __future__ import annotations

import pytest

from ramem_local.retrieve import _standing_out


def closeness(*values: float) -> dict[int, float]:
    """Memory ids 1, 2, ... with these closeness values (shuffled order: the rule sorts)."""
    return dict(reversed(list(enumerate(values, 1))))


@pytest.mark.parametrize(("values", "expected"), [
    # A new journal's month of six reports: the largest drop of the whole range is the one
    # before the two least like the question; among the closest four it is after the first.
    ((0.347, 0.103, 0.046, 0.019, -0.400, -0.478), [1]),
    # Three hikes among seven reports: at most half stand out, and three do.
    ((0.52, 0.50, 0.47, 0.10, 0.05, 0.00, -0.10), [1, 2, 3]),
    # Two or three reports show no drop: the closest alone.
    ((0.30, 0.10), [1]),
    ((0.30, 0.29, -0.40), [1]),
    ((0.30,), [1]),
    ((), []),
])
def test_a_short_range_reads_the_drop_among_its_closest_half(values, expected):
    assert sorted(_standing_out(closeness(*values))) == expected


def test_a_range_of_22_or_more_reads_the_eleven_closest():
    """Where a month holds dozens of reports the rule is the one measured on the journal
    benchmark before: the largest drop among the eleven closest, wherever the range's tail
    falls."""
    values = [0.5, 0.45, 0.2] + [0.1 - 0.001 * i for i in range(8)] + [-0.9] * 11
    assert len(values) == 22
    assert sorted(_standing_out(closeness(*values))) == [1, 2]
    assert sorted(_standing_out(closeness(*values), among=3)) == [1, 2]


def test_ties_and_a_flat_range_count_the_closest_down_to_the_first_largest_drop():
    flat = closeness(*[0.2] * 10)
    assert len(_standing_out(flat)) == 1
