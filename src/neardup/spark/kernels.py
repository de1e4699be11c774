"""Executor-side work on Arrow batches, with the library's own code (no PySpark import here).

Three functions run inside Spark's Python workers: :func:`prepare_batch` (fingerprints, exact
keys, verifier sketches and candidate keys through :meth:`Deduplicator.prepare`),
:func:`accept_pairs` (the accept predicate minus the window, on candidate pairs of nodes) and
:func:`decide_group` (the greedy rule over the documents of whole connected components). The
decision itself (processing order, searched rows, accept test, candidate order, greedy rule) is
the library's decision core, :mod:`neardup.dedup.core`, with the Deduplicator's
``decide_config``: nothing of it is written here. The three take and return ``pyarrow``
tables, so they are tested without Spark and the Spark engine stays a thin plan around them.

The one place that pays the kernels' start-up per Python worker is :func:`warm`: the first batch
a worker sees loads the C extension (about a millisecond) or, on an install without it, the numba
fallback from numba's cache (``NUMBA_CACHE_DIR`` when set, else ``__pycache__`` next to the
installed sources), compiling it once.

>>> import pyarrow as pa
>>> from neardup import Deduplicator
>>> dd = Deduplicator(k=3, verifier=None)
>>> t = pa.table({"pos": [0, 1, 2], "text": ["a b c d e", "A b c d e", ""], "ts": [None] * 3})
>>> out = prepare_batch(dd, t)
>>> out.column("empty").to_pylist(), out.column("ekey")[0].as_py() == out.column("ekey")[1].as_py()
([False, False, True], True)
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from neardup.dedup.core import (
    Csr,
    Ledger,
    accept,
    candidate_csr,
    decide,
    processing_order,
    searched_rows,
    verify_pairs,
)
from neardup.dedup.decisions import DUPLICATE
from neardup.dedup.pipeline import Deduplicator
from neardup.dedup.similarity import decided_evidence

_WARM: dict[str, float] = {}

PREPARED = pa.schema(
    [
        ("pos", pa.int64()),
        ("fp", pa.int64()),
        ("empty", pa.bool_()),
        ("ekey", pa.binary()),
        ("sketch", pa.binary()),
        ("length", pa.int64()),
        ("ts", pa.float64()),
        ("keys", pa.list_(pa.int64())),
    ]
)
ACCEPTED = pa.schema(
    [("a", pa.int64()), ("b", pa.int64()), ("dist", pa.int64()), ("sim", pa.float64())]
)
SIMILARITY = pa.schema(
    [("pos", pa.int64()), ("similarity", pa.float64()), ("threshold", pa.float64())]
)
DECIDED = pa.schema(
    [
        ("pos", pa.int64()),
        ("status", pa.int8()),
        ("rep", pa.int64()),
        ("distance", pa.int16()),
    ]
)


def warm(dd: Deduplicator) -> float:
    """Load the kernels in this worker once (compiling the numba fallback when the C extension
    is missing); returns the seconds it took."""
    name = dd.fingerprinter.config_id
    if name not in _WARM:
        start = time.perf_counter()
        dd.prepare(["warm up the kernels", ""], [0.0, 0.0])
        _WARM[name] = time.perf_counter() - start
    return _WARM[name]


def candidate_keys(
    dd: Deduplicator, fps: npt.NDArray[np.uint64], sketches: npt.NDArray[Any] | None
) -> npt.NDArray[np.uint64]:
    """The candidate join keys ``(n, m)`` of the Deduplicator's own candidate design."""
    return np.asarray(dd.state.candidates.keys(fps, sketches), np.uint64).reshape(len(fps), -1)


def accept_radius(dd: Deduplicator) -> int:
    """The Hamming bound of the accept predicate (what ``Deduplicator`` filters on)."""
    return int(dd.state.decide_config.radius)


def prepare_batch(dd: Deduplicator, batch: pa.Table | pa.RecordBatch) -> pa.RecordBatch:
    """``(pos, text, ts)`` -> :data:`PREPARED`: the per-document data every engine decides on."""
    warm(dd)
    texts = batch.column("text").to_pylist()
    ts_col = batch.column("ts").to_numpy(zero_copy_only=False)
    ts = np.asarray(ts_col, np.float64)  # nulls -> nan
    timed = dd.window is not None or dd.keep == "newest"
    chunk = dd.prepare(texts, ts.tolist() if timed else None)
    n = len(texts)
    live = np.flatnonzero(~chunk.empty)
    sketches = chunk.sketches
    keys = np.zeros((live.size, 0), np.int64)
    if live.size:
        sk = None if sketches is None else sketches[live]
        keys = candidate_keys(dd, chunk.fps[live], sk).view(np.int64)
    # list<int64> column: empty texts get null, the others their row of keys (no Python loop)
    lengths = np.zeros(n, np.int32)
    lengths[live] = keys.shape[1]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    mask = np.ones(n, bool)
    mask[live] = False
    key_col = pa.ListArray.from_arrays(
        pa.array(offsets), pa.array(keys.ravel(), pa.int64()), mask=pa.array(mask)
    )
    return pa.RecordBatch.from_arrays(
        [
            pa.array(batch.column("pos").to_numpy(), pa.int64()),
            pa.array(chunk.fps.view(np.int64)),
            pa.array(chunk.empty),
            pa.array([int(key).to_bytes(16, "big") for key in chunk.keys], pa.binary()),
            _binary_rows(sketches, n),
            pa.array(chunk.lengths),
            pa.array(ts, pa.float64()),
            key_col,
        ],
        schema=PREPARED,
    )


def _binary_rows(rows: npt.NDArray[Any] | None, n: int) -> pa.Array:
    """One ``binary`` value per row of a 2-d array (its bytes), or ``n`` empty values."""
    if rows is None:
        return pa.array([b""] * n, pa.binary())
    flat = np.ascontiguousarray(rows)
    width = flat.strides[0] if flat.ndim == 2 else 0
    fixed = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(flat.tobytes())]
    )
    return fixed.cast(pa.binary())


def _sketch_rows(dd: Deduplicator, col: pa.Array | pa.ChunkedArray) -> npt.NDArray[Any]:
    assert dd.verifier is not None
    dtype = getattr(dd.verifier, "dtype", np.uint8)
    raw = b"".join(col.to_pylist())
    return np.frombuffer(raw, dtype=dtype).reshape(len(col), -1)


def similarity_batch(dd: Deduplicator, batch: pa.Table | pa.RecordBatch) -> pa.RecordBatch:
    """Duplicates ``(pos, distance, sketch, rep_sketch)`` -> ``(pos, similarity, threshold)``:
    the value that decided them and the threshold that applied, by the library's
    :func:`~neardup.dedup.similarity.decided_evidence`."""
    n = batch.num_rows
    status = np.full(n, DUPLICATE, np.int8)
    dist = batch.column("distance").to_numpy(zero_copy_only=False)
    sk = rep = None
    if dd.verifier is not None:
        sk = _sketch_rows(dd, batch.column("sketch"))
        rep = _sketch_rows(dd, batch.column("rep_sketch"))
    sim, need = decided_evidence(dd.verifier, status, dist, sk, rep)
    cols = [batch.column("pos"), pa.array(sim), pa.array(need)]
    return pa.RecordBatch.from_arrays(cols, schema=SIMILARITY)


def accept_pairs(dd: Deduplicator, batch: pa.Table | pa.RecordBatch) -> pa.RecordBatch:
    """Node pairs ``(a, b, fp_a, fp_b, sk_a, sk_b)`` -> the accepted ones ``(a, b, dist, sim)``
    (``sim``: the verifier's similarity, NaN without a verifier).

    Accept = Hamming distance within the radius and, with a verifier, similarity at or above
    its threshold; the time window is applied per document pair in :func:`decide_group`.
    """
    fa = batch.column("fp_a").to_numpy().view(np.uint64)
    fb = batch.column("fp_b").to_numpy().view(np.uint64)
    dist = np.bitwise_count(fa ^ fb).astype(np.int64)
    cfg = dd.state.decide_config
    keep = accept(cfg, dist, None, None, None)  # window: per document pair in decide_group
    sim = np.full(dist.size, np.nan)
    if dd.verifier is not None and keep.any():
        rows = np.flatnonzero(keep)
        sa = _sketch_rows(dd, batch.column("sk_a").take(pa.array(rows)))
        sb = _sketch_rows(dd, batch.column("sk_b").take(pa.array(rows)))
        sim[rows], need = verify_pairs(dd.verifier, sa, sb, float(cfg.threshold or 0))
        keep[rows] = accept(cfg, dist[rows], None, None, sim[rows], None, need)
    idx = pa.array(np.flatnonzero(keep))
    a, b = batch.column("a").take(idx), batch.column("b").take(idx)
    return pa.RecordBatch.from_arrays(
        [a, b, pa.array(dist[keep]), pa.array(sim[keep])], schema=ACCEPTED
    )


def _members(node: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]) -> dict[int, Any]:
    """Node id -> the given local rows of that node (as an int64 array)."""
    out: dict[int, list[int]] = {}
    for r, nd in zip(rows.tolist(), node[rows].tolist(), strict=True):
        out.setdefault(nd, []).append(r)
    return {nd: np.asarray(rs, np.int64) for nd, rs in out.items()}


def _candidate_lists(
    members: dict[int, Any],
    edges: tuple[npt.NDArray[np.int64], ...],
    sims: npt.NDArray[np.float64],
    ts: npt.NDArray[np.float64],
    dd: Deduplicator,
    m: int,
    hz: npt.NDArray[np.float64] | None = None,
) -> Csr:
    """CSR candidate lists of ``m`` local rows from accepted node edges (both directions).

    Edges between two one-document nodes (nearly all of them) are expanded with array
    operations, so a component with millions of edges costs no Python loop per edge.
    """
    a, b, d = edges
    nodes = np.array(sorted(members), np.int64)
    size = np.array([members[n].size for n in nodes.tolist()], np.int64)
    row = np.array([members[n][0] for n in nodes.tolist()], np.int64)
    qs, ps, ds, ss = [], [], [], []
    if nodes.size and a.size:
        ia = np.minimum(np.searchsorted(nodes, a), nodes.size - 1)
        ib = np.minimum(np.searchsorted(nodes, b), nodes.size - 1)
        known = (nodes[ia] == a) & (nodes[ib] == b)
        simple = known & (a != b) & (size[ia] == 1) & (size[ib] == 1)
        qs += [row[ia[simple]], row[ib[simple]]]
        ps += [row[ib[simple]], row[ia[simple]]]
        ds += [d[simple], d[simple]]
        ss += [sims[simple], sims[simple]]
        for e in np.flatnonzero(known & ~simple).tolist():
            left, right = members[int(a[e])], members[int(b[e])]
            q, p = np.repeat(left, right.size), np.tile(right, left.size)
            if a[e] == b[e]:  # copies of one node accept each other
                q, p = q[q != p], p[q != p]
            else:
                q, p = np.concatenate([q, p]), np.concatenate([p, q])
            qs.append(q)
            ps.append(p)
            ds.append(np.full(q.size, d[e], np.int64))
            ss.append(np.full(q.size, sims[e]))
    none = np.zeros(0, np.int64)
    q = np.concatenate(qs) if qs else none
    p = np.concatenate(ps) if ps else none
    dist = np.concatenate(ds).astype(np.int64) if ds else none
    sim = np.concatenate(ss) if ss else np.zeros(0)
    ok = accept(dd.state.decide_config, dist, ts[q], ts[p], None, None if hz is None else hz[q])
    ranked = None if dd.state.decide_config.cluster_similarity is None else sim[ok]
    # local rows in input order: ties by position
    return candidate_csr(q[ok], p[ok], dist[ok], m, ranked)


def decide_group(dd: Deduplicator, docs: pa.Table, edges: pa.Table) -> pa.Table:
    """Decide whole connected components: ``docs (pos, node, ekey, ts, length[, hz])`` with their
    accepted node ``edges (a, b, dist)`` -> :data:`DECIDED` (``rep`` is a global position).

    Components never interact (a document's decision depends only on its candidates and the
    copies of its text, all in its component), so one greedy pass over several components in
    processing order decides each as the whole input would.
    """
    docs = docs.sort_by("pos")
    pos = docs.column("pos").to_numpy()
    m = len(pos)
    node = docs.column("node").to_numpy()
    ekeys = docs.column("ekey").to_pylist()
    ts = np.asarray(docs.column("ts").to_numpy(zero_copy_only=False), np.float64)
    length = docs.column("length").to_numpy()
    order = processing_order(dd.keep, pos, length, ts)
    cfg = dd.state.decide_config
    members = _members(node, searched_rows(cfg, order, ekeys))
    triple = (
        np.asarray(edges.column("a").to_numpy(), np.int64),
        np.asarray(edges.column("b").to_numpy(), np.int64),
        np.asarray(edges.column("dist").to_numpy(), np.int64),
    )
    hz = None
    if "hz" in docs.column_names:
        hz = np.asarray(docs.column("hz").to_numpy(zero_copy_only=False), np.float64)
    sims = np.asarray(edges.column("sim").to_numpy(zero_copy_only=False), np.float64)
    csr = _candidate_lists(members, triple, sims, ts, dd, m, hz)
    ledger = Ledger.empty(m, ts if dd.window is not None else None)
    keys = [int.from_bytes(k, "big") for k in ekeys]
    decide(cfg, ledger, order, [False] * m, keys, csr, horizon=hz)
    return pa.table(
        {
            "pos": pos,
            "status": ledger.status,
            "rep": pos[ledger.rep],
            "distance": ledger.distance,
        },
        schema=DECIDED,
    )
