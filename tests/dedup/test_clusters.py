"""Connected components (the one implementation; eval uses it too) against union-find."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.dedup.clusters import cluster_sizes, connected_components, relabel_by_first


def union_find_labels(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Reference: union-find, components numbered by their smallest node."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    first: dict[int, int] = {}
    return [first.setdefault(find(x), len(first)) for x in range(n)]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60)
            if n
            else st.just([]),
        )
    )
)
def test_connected_components_match_union_find(case: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = case
    i = [a for a, _ in edges]
    j = [b for _, b in edges]
    labels = connected_components(n, i, j)
    assert labels.tolist() == union_find_labels(n, edges)
    assert int(cluster_sizes(labels).sum()) == n


def test_connected_components_bad_input() -> None:
    assert connected_components(6, [0, 1, 4], [1, 2, 5]).tolist() == [0, 0, 0, 1, 2, 2]
    with pytest.raises(ValueError, match="differ in shape"):
        connected_components(3, [0], [1, 2])
    with pytest.raises(ValueError, match=r"lie in \[0, 3\)"):
        connected_components(3, [0], [3])
    assert relabel_by_first(np.array([5, 5, 2])).tolist() == [0, 0, 1]
