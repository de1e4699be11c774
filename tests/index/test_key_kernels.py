"""The key-table kernels (C, or numba without the extension) against numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.index import key_kernels
from neardup.index.keytable import _Run


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 400),
    nq=st.integers(0, 60),
    spread=st.sampled_from([4, 64, 2**64 - 1]),
    cap=st.integers(0, 50),
    seed=st.integers(0, 2**32 - 1),
)
def test_lookup_equals_numpy(n: int, nq: int, spread: int, cap: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    hi = np.uint64(spread)
    raw = rng.integers(0, hi, size=n, dtype=np.uint64, endpoint=True)
    if spread < 2**64 - 1:  # few distinct keys, spread over the buckets by the top bits
        raw = raw * np.uint64(0x9E3779B97F4A7C15)
    run = _Run.build(raw, np.arange(n, dtype=np.uint32))
    queries = np.concatenate([raw[: nq // 2], rng.integers(0, 2**63, size=nq - nq // 2)])
    queries = queries.astype(np.uint64)
    nq = queries.size  # raw may hold fewer than nq // 2 keys
    out_q, out_at = np.empty(cap, np.int64), np.empty(cap, np.int64)
    c = key_kernels.lookup(run.keys, run.offsets, run.p, queries, out_q, out_at)
    want = [(i, a) for i in range(nq) for a in np.flatnonzero(run.keys == queries[i]).tolist()]
    assert c == len(want)
    got = list(zip(out_q[: min(c, cap)].tolist(), out_at[: min(c, cap)].tolist(), strict=True))
    assert got == want[:cap]


@settings(max_examples=60, deadline=None)
@given(
    na=st.integers(0, 200),
    nb=st.integers(0, 200),
    seed=st.integers(0, 2**32 - 1),
)
def test_merge_equals_stable_sort(na: int, nb: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ak = np.sort(rng.integers(0, 50, size=na).astype(np.uint64))
    bk = np.sort(rng.integers(0, 50, size=nb).astype(np.uint64))
    aslot = rng.integers(0, 30, size=na).astype(np.uint32)
    bslot = rng.integers(0, 30, size=nb).astype(np.uint32)
    dead = rng.random(30) < 0.3
    outk, outs = np.empty(na + nb, np.uint64), np.empty(na + nb, np.uint32)
    m = key_kernels.merge(ak, aslot, bk, bslot, dead, outk, outs)
    keys, slots = np.concatenate([ak, bk]), np.concatenate([aslot, bslot])
    order = np.argsort(keys, kind="stable")  # ties: a's rows first, each run in order
    keep = order[~dead[slots[order]]]
    assert m == keep.size
    assert outk[:m].tolist() == keys[keep].tolist()
    assert outs[:m].tolist() == slots[keep].tolist()


def test_native_rejects_offsets_outside_keys() -> None:
    native = pytest.importorskip("neardup._native")
    keys = np.arange(4, dtype=np.uint64)
    offsets = np.array([0, 9, 9], dtype=np.int64)  # bucket 0 claims 9 rows of 4
    out = np.empty(8, np.int64)
    with pytest.raises(ValueError, match="offsets"):
        native.key_lookup(keys, offsets, 1, np.zeros(1, np.uint64), out, out.copy())
    with pytest.raises(IndexError, match="slot"):
        native.key_merge(
            keys,
            np.array([0, 1, 2, 7], np.uint32),
            keys[:0],
            np.zeros(0, np.uint32),
            np.zeros(4, bool),
            np.empty(4, np.uint64),
            np.empty(4, np.uint32),
        )
