"""Connected components on DataFrames equal the core's numpy components (real Spark)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.dedup.clusters import connected_components as numpy_components
from neardup.spark.components import connected_components


@settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edges=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=80),
    path=st.integers(2, 40),
)
def test_components_match_numpy(spark: Any, edges: list[tuple[int, int]], path: int) -> None:
    """Random edges plus a long path (ids shuffled), so several large/small-star rounds run."""
    rng = np.random.default_rng(path)
    ids = rng.permutation(1000)[:path] + 100
    edges = edges + list(zip(ids[:-1].tolist(), ids[1:].tolist(), strict=True))
    df = spark.createDataFrame(edges, "a long, b long")
    out, rounds = connected_components(df)
    got = {r["node"]: r["comp"] for r in out.collect()}
    nodes = sorted({x for e in edges for x in e})
    assert sorted(got) == nodes
    n = max(nodes) + 1
    i, j = np.array(edges).T
    ref = numpy_components(n, i, j)
    for u in nodes:  # same partition, and the label is the component's smallest node
        members = [v for v in nodes if ref[v] == ref[u]]
        assert got[u] == min(members)
    assert 0 <= rounds <= 64
