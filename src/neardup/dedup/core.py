"""The decision core: the one definition of the decide step's inputs, shared by every engine.

Every engine (the library's :class:`~neardup.dedup.pipeline.Deduplicator`, the Spark kernels,
``explain``) decides documents in the same four steps, all written once here and knowing nothing
of files, HTTP or Spark:

1. :func:`processing_order`: input position, longest first or newest first (ties: position);
2. :func:`searched_rows`: the rows that take the Hamming path (without a window only the first
   copy of a normalised text: later copies always take the exact path);
3. :func:`accept`: the accept test of a candidate pair (distance within the radius, time window,
   verifier similarity at or above its threshold);
4. :func:`candidate_csr` then :func:`decide`: accepted candidates sorted per document by
   (distance, position) and the greedy rule (:func:`~neardup.dedup.greedy.decide_in_order`).

:class:`DecideConfig` holds the parameters these steps read; a ``Deduplicator`` builds it once
(:attr:`Deduplicator.decide_config <neardup.dedup.pipeline.Deduplicator.decide_config>`).

>>> cfg = DecideConfig(radius=3, keep="first", window=None, threshold=None)
>>> order = processing_order(cfg.keep, np.arange(3), np.array([5, 5, 5]), np.zeros(3))
>>> keys = [7, 7, 9]
>>> searched_rows(cfg, order, keys).tolist()  # the copy of text 7 takes the exact path
[0, 2]
>>> q, p, d = np.array([2]), np.array([0]), np.array([2])
>>> ok = accept(cfg, d, np.zeros(3)[q], np.zeros(3)[p], None)
>>> ledger = Ledger.empty(3)
>>> _ = decide(cfg, ledger, order, [False] * 3, keys, candidate_csr(q[ok], p[ok], d[ok], 3))
>>> ledger.statuses(), ledger.rep.tolist()
(['unique', 'exact_duplicate', 'duplicate'], [0, 0, 0])
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.dedup.greedy import Ledger, decide_in_order

__all__ = [
    "Csr",
    "DecideConfig",
    "Ledger",
    "accept",
    "candidate_csr",
    "decide",
    "processing_order",
    "searched_rows",
]

Csr = tuple[list[int], list[int], list[int]]


@dataclass(frozen=True)
class DecideConfig:
    """What the decide step reads: the Hamming ``radius`` of a candidate, the keep policy, the
    time ``window`` (seconds or None) and the verifier ``threshold`` (None: no verifier).

    >>> DecideConfig(radius=64, keep="first", window=None, threshold=0.5).threshold
    0.5
    """

    radius: int
    keep: str
    window: float | None
    threshold: float | None


def processing_order(
    keep: str, pos: npt.NDArray[np.int64], length: npt.NDArray[np.int64], ts: npt.NDArray[Any]
) -> npt.NDArray[np.int64]:
    """Rows in processing order: input position, longest first, or newest first (ties: position).

    >>> processing_order("longest", np.array([0, 1, 2]), np.array([3, 9, 9]), np.zeros(3)).tolist()
    [1, 2, 0]
    """
    if keep == "longest":
        return np.lexsort((pos, -np.asarray(length)))
    if keep == "newest":
        return np.lexsort((pos, -np.asarray(ts, np.float64)))
    return np.argsort(pos, kind="stable")


def searched_rows(
    config: DecideConfig,
    order: npt.NDArray[np.int64],
    keys: Sequence[Any],
    seen: Container[Any] = (),
) -> npt.NDArray[np.int64]:
    """Rows (sorted) that may take the Hamming path, from the non-empty rows in ``order``.

    Without a window, a later copy of an already seen normalised text (``keys``: exact keys per
    row; ``seen``: keys decided before this batch) always takes the exact path, so only the
    first copy is searched: a text repeated m times costs no m^2 pairs. With a window a copy may
    fall outside it, so every row is searched.
    """
    if config.window is not None:
        return np.sort(np.asarray(order, np.int64))
    first: set[Any] = set()
    out = []
    for r in order.tolist():
        key = keys[r]
        if key not in first and key not in seen:
            first.add(key)
            out.append(r)
    return np.sort(np.asarray(out, dtype=np.int64))


def accept(
    config: DecideConfig,
    dist: npt.NDArray[np.int64],
    ts_q: npt.NDArray[np.float64] | None,
    ts_p: npt.NDArray[np.float64] | None,
    similarity: npt.NDArray[np.float64] | None,
) -> npt.NDArray[np.bool_]:
    """The accept test of candidate pairs: Hamming distance within the radius, timestamps
    within the window (skipped when ``ts_q``/``ts_p`` are None: applied later) and, with a
    verifier, ``similarity >= threshold`` (``similarity`` None: not computed yet).

    >>> cfg = DecideConfig(radius=3, keep="first", window=None, threshold=0.5)
    >>> accept(cfg, np.array([1, 4, 2]), None, None, np.array([0.9, 0.9, 0.4])).tolist()
    [True, False, False]
    """
    ok: npt.NDArray[np.bool_] = np.asarray(dist) <= config.radius
    if config.window is not None and ts_q is not None and ts_p is not None:
        ok &= np.abs(np.asarray(ts_q) - np.asarray(ts_p)) <= config.window
    if config.threshold is not None and similarity is not None:
        ok &= np.asarray(similarity, np.float64) >= config.threshold
    return ok


def candidate_csr(
    q: npt.NDArray[np.int64], pos: npt.NDArray[np.int64], dist: npt.NDArray[np.int64], n: int
) -> Csr:
    """Accepted candidates ``(query row, candidate position, distance)`` as CSR lists per query
    row ``0..n-1``, each sorted by (distance, position): the greedy rule takes the first kept.

    >>> candidate_csr(np.array([1, 1]), np.array([0, 5]), np.array([3, 1]), 2)
    ([0, 0, 2], [5, 0], [1, 3])
    """
    q, pos, dist = (np.asarray(a, np.int64) for a in (q, pos, dist))
    order = np.lexsort((pos, dist, q))
    ptr = np.searchsorted(q[order], np.arange(n + 1))
    return ptr.tolist(), pos[order].tolist(), dist[order].tolist()


def decide(
    config: DecideConfig,
    ledger: Ledger,
    order: npt.NDArray[np.int64],
    empty: Sequence[bool],
    keys: Sequence[int],
    csr: Csr,
    *,
    base: int = 0,
    origin: int = 0,
) -> list[int]:
    """The greedy rule over ``order`` on accepted candidates ``csr``, written into ``ledger``
    (rows ``base..`` of it, positions relative to ``origin``); returns the new kept rows."""
    ptr, pos, dist = csr
    return decide_in_order(
        ledger,
        np.asarray(order, np.int64),
        base=base,
        empty=empty,
        keys=keys,
        ptr=ptr,
        pos=pos,
        dist=dist,
        window=config.window,
        origin=origin,
    )
