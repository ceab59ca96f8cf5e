"""The one max-min fair allocator, shared by condensing and the workbench's reads."""

from __future__ import annotations

import pytest

from jupyter_jcli.condense._budget import UNBOUNDED, allocate

CASES = [
    # (demands, total, shares)
    ([10, 20, 30], 100, [10, 20, 30]),  # everything fits: each gets its demand
    ([10, 500, 500], 100, [10, 45, 45]),  # the small part is served, the big ones share
    ([UNBOUNDED, UNBOUNDED, UNBOUNDED], 10, [4, 3, 3]),  # the remainder goes to the first
    ([5, UNBOUNDED], 100, [5, 95]),  # an unbounded part takes all that is left
    ([-7, 5], 20, [15, 5]),  # any negative demand is unbounded
    ([50, 50], -3, [0, 0]),  # a negative total counts as nothing
    ([50, 50], 0, [0, 0]),
    ([], 10, []),
    ([0, 0, 9], 6, [0, 0, 6]),  # zero demands take nothing
    ([30, 2, 30], 20, [9, 2, 9]),  # the order of the result is the order of the demands
    ([10, 10], 5, [3, 2]),
    ([3, 4], 7, [3, 4]),  # exactly enough
    ([1, 100, 100, 100], 10, [1, 3, 3, 3]),
]


@pytest.mark.parametrize(("demands", "total", "shares"), CASES)
def test_allocate_gives_max_min_fair_shares(
    demands: list[int], total: int, shares: list[int]
) -> None:
    assert allocate(demands, total) == shares


@pytest.mark.parametrize(("demands", "total", "shares"), CASES)
def test_allocate_never_hands_out_more_than_the_total(
    demands: list[int], total: int, shares: list[int]
) -> None:
    result = allocate(demands, total)
    assert len(result) == len(demands)
    assert sum(result) <= max(total, 0)
    assert all(share >= 0 for share in result)
    assert all(
        share <= demand for share, demand in zip(result, demands, strict=True) if demand >= 0
    )
