"""The dedup state's column-schema table (issue 37): ``columns.SCHEMA`` is what the state holds,
what a saved state writes (names, dtypes), and the one way rows enter a state without being
decided (``DedupState.take_rows``): restoring its columns into a fresh state or appending them
in parts gives the state that fed the documents."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Deduplicator
from neardup._growable import Growable
from neardup.dedup import from_state_columns
from neardup.dedup.columns import NARROW, SCHEMA, DocColumns
from neardup.dedup.persist import StateFormatError, bundle, load_bundle

from .test_state import corpus, same

CONFIGS: list[dict[str, Any]] = [
    {},
    {"window": 5.0},
    {"verifier": None, "k": 6},
    {"cluster_similarity": None, "k": 12},
]


def _timestamps(n: int) -> list[float]:
    return [float(i // 7) for i in range(n)]


def _fed(opts: dict[str, Any], texts: list[str]) -> Deduplicator:
    dd = Deduplicator(**opts)
    ts = _timestamps(len(texts)) if "window" in opts else None
    for a in range(0, len(texts), 40):
        dd.feed(texts[a : a + 40], None if ts is None else ts[a : a + 40])
    return dd


def test_every_schema_column_is_a_real_attribute_of_its_dtype() -> None:
    cols = DocColumns(timed=True, tight=True, sketched=True)
    held = [name for name, v in vars(cols).items() if isinstance(v, Growable)]
    assert held == [c.name for c in SCHEMA]  # one attribute per row, in the table's order
    for c in SCHEMA:  # positions and cluster numbers: int32 until 2**31 (saved as SCHEMA's)
        want = np.int32 if c.name in NARROW else c.dtype
        assert cols.column(c.name).data.dtype == np.dtype(want), c.name
    assert [c.name for c in cols.held] == held


@pytest.mark.parametrize("opts", CONFIGS, ids=str)
def test_a_saved_state_writes_the_schema_columns_with_their_dtypes(
    tmp_path: Path, opts: dict[str, Any]
) -> None:
    dd = _fed(opts, corpus(120, seed=3))
    dd.save(tmp_path / "s")
    live = tmp_path / "s" / (tmp_path / "s" / "CURRENT").read_text().strip()
    saved = dd.state.cols.saved()
    want = {c.name for c in saved}
    assert ("ts" in want) == ("window" in opts)
    assert ("floor" in want) == (dd.state.decide_config.cluster_similarity is not None)
    rows = np.load(live / "status.npy").shape
    for c in saved:
        got = np.load(live / f"{c.name}.npy")
        assert got.dtype == np.dtype(c.dtype) and got.shape == rows, c.name


def test_a_saved_state_missing_a_required_column_is_named(tmp_path: Path) -> None:
    dd = _fed({}, corpus(60, seed=4))
    meta, arrays = bundle(dd.state)
    del arrays["cluster"]
    fresh = Deduplicator()
    with pytest.raises(StateFormatError, match=r"saved: cluster\.npy is missing; restore it"):
        load_bundle(fresh.state, meta, arrays, "saved")


@settings(max_examples=12, deadline=None)
@given(cuts=st.lists(st.integers(1, 239), max_size=3, unique=True), which=st.integers(0, 3))
def test_restore_in_parts_equals_feeding(cuts: list[int], which: int) -> None:
    """The columns of a state, taken into a fresh state from the first cut on and appended
    part by part, give the same columns, and the same later decisions, as the state that fed
    the documents."""
    opts, texts = CONFIGS[which], corpus(300, seed=8)
    ref = _fed(opts, texts[:240])
    meta, columns = ref.state.meta(), ref.state.columns()
    bounds = sorted({0, *cuts, 240})
    first = _fed(opts, texts[: bounds[1]]).state.meta()  # the meta that goes with those rows
    got = from_state_columns(Deduplicator(**opts), _rows(columns, 0, bounds[1]), first)
    for a, b in pairwise(bounds[1:]):
        got.state.restore(_rows(columns, a, b), {**meta, "documents": b})
    back = got.state.columns()
    assert list(back) == list(columns)
    for name, want in columns.items():
        assert np.array_equal(back[name], want, equal_nan=want.dtype.kind == "f"), name
    ts = _timestamps(300)[240:] if "window" in opts else None
    same(got.feed(texts[240:], ts), ref.feed(texts[240:], ts))


def _rows(columns: dict[str, np.ndarray], a: int, b: int) -> dict[str, np.ndarray]:
    return {name: col[a:b] for name, col in columns.items()}


def test_describe_counts_each_column_once() -> None:
    """``state_bytes`` is every per-document column's buffer once (before the schema table, a
    window's ``ts`` column was counted twice: once as saved, once as per-document)."""
    texts = corpus(100, seed=5)
    dd = _fed({"window": 5.0}, texts)
    columns = [dd.state.cols.column(c.name) for c in SCHEMA]
    assert dd.state.cols.ts.nbytes > 0
    assert dd.describe()["state_bytes"] == sum(g.nbytes for g in columns)
