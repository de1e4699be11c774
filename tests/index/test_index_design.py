"""The radius rule and the auto design."""

from __future__ import annotations

import itertools

import pytest

from neardup.index import TableDesign, auto_design
from neardup.index.design import probes_per_table, radius


def _brute_radius(b: int, s: int, k: int) -> int:
    """max over error spreads of k bits on b blocks of the s lightest blocks' errors."""
    best = 0
    for spread in itertools.product(range(k + 1), repeat=b):
        if sum(spread) == k:
            best = max(best, sum(sorted(spread)[:s]))
    return best


@pytest.mark.parametrize("b", range(1, 7))
def test_radius_is_tight(b: int) -> None:
    for s in range(1, b + 1):
        for k in range(9):
            assert radius(b, s, k) == _brute_radius(b, s, k), (b, s, k)


def test_manku_tables() -> None:
    assert TableDesign(k=3, blocks=4).tables == 4
    assert TableDesign(k=3, blocks=6).tables == 20
    assert TableDesign(k=3, blocks=6).radius == 0
    assert probes_per_table(16, 2) == 1 + 16 + 120


def test_auto_design_respects_budget() -> None:
    big = auto_design(10**8, k=3, memory_budget=8 * 2**30)
    assert big.cost(10**8)["memory_bytes"] <= 8 * 2**30
    small_budget = auto_design(10**8, k=3, memory_budget=1)
    assert small_budget.tables == min(d.tables for d in [small_budget, big])
    for k in range(11):
        d = auto_design(10**6, k=k)
        assert d.k == k and d.cost(10**6)["probes_per_table"] <= 5000
