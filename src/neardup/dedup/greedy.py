"""The one greedy decision rule, on arrays: every engine (library, CLI, service, Spark) calls it.

Documents are decided one by one in processing order. For document ``g``:

1. no features: ``empty``, a cluster of its own, never matched;
2. exact path: ``p = exact[key]`` (the last document with this normalised text that was searched)
   and ``r = rep[p]``; without a window, or with ``|t_g - t_r| <= window``, ``g`` joins ``r``'s
   cluster: ``exact_duplicate`` (distance 0) when ``p == r``, else ``duplicate`` at ``p``'s
   distance; with a horizon (streaming order, see :func:`horizons`) also ``floor(t_r) >= h_g``;
3. otherwise ``exact[key] = g`` and the first candidate (candidates arrive sorted by distance,
   then position, already filtered by the accept predicate) that is a *kept* document makes ``g``
   a ``duplicate`` of it;
4. no candidate: ``unique``, kept, a new cluster.

With ``cluster_similarity`` q (the default with a verifier: 0.25), candidates arrive sorted by
similarity (highest first) and in step 3 ``g`` joins kept ``r`` only when
``s(g, r) + floor[r] >= 1 + q``, where ``floor[r]`` is the lowest similarity of a document
that joined ``r`` so far (1 when none); joining lowers ``floor[r]`` to ``s(g, r)``. Jaccard
distance obeys the triangle inequality, so every two members ``a``, ``b`` of one cluster then
have ``J(a, b) >= s(a, r) + s(b, r) - 1 >= q``: a cluster is a group of mutual near
duplicates, not a chain of documents each like the kept one in a different part (with q =
0.5, a document made of paragraphs 1-3 does not gather one of paragraphs 1-2 and one of
paragraphs 2-3; the default 0.25 stops the pairs whose members both barely pass the threshold).
``g`` that may not join ``r`` tries the next candidate; when every cluster refuses it, ``g``
is still a ``duplicate`` of its closest candidate (the first, the most similar) and joins that
cluster, lowering its floor: a document whose similarity to a kept document passes the
threshold is never kept because of the cluster rule, so a lower threshold never turns a
duplicate into a kept document through it (issue 38; the rule's version 2, see
:data:`CLUSTER_RULE`). The rule reads similarities rounded to 4 decimals, as every surface
writes them.

Clusters are numbered in order of creation. The Spark engine runs this rule per connected
component of the accepted-candidate graph: a document's decision depends only on its neighbours'.

>>> import numpy as np
>>> ledger = Ledger.empty(3)
>>> kept = decide_in_order(
...     ledger, np.arange(3), base=0, empty=[False, False, False], keys=[7, 7, 9],
...     ptr=[0, 0, 0, 1], pos=[0], dist=[5])
>>> ledger.statuses(), ledger.rep.tolist(), kept
(['unique', 'exact_duplicate', 'duplicate'], [0, 0, 0], [0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from neardup.dedup.decisions import DUPLICATE, EMPTY, EXACT_DUPLICATE, STATUS_NAMES, UNIQUE

#: Version of the ``cluster_similarity`` rule, part of a configuration's ``config_id`` (1, absent
#: from the id: a document every cluster refused was kept; 2: it joins its closest candidate).
CLUSTER_RULE = 2


@dataclass(frozen=True)
class Considered:
    """A kept candidate the rule considered for a traced document (:attr:`Ledger.trace`), in
    the order considered: its ``position``, Hamming ``distance``, ``similarity`` as the rule
    read it and ``floor``, the lowest similarity of a member of its cluster at that moment
    (both None without ``cluster_similarity``: the first kept candidate is joined), and
    ``outcome``: ``joined``, ``refused`` (``similarity + floor < 1 + cluster_similarity``) or,
    as a last entry, ``closest`` (every cluster refused: the document joins the first).
    """

    position: int
    distance: int
    similarity: float | None
    floor: float | None
    outcome: str


@dataclass
class Ledger:
    """Per-document decision arrays indexed by position, plus the state the rule carries along.

    ``rep``: position of the kept document (itself when kept); ``distance``: Hamming distance
    to it (-1 when kept); ``cluster``: cluster number; ``status``: status code; ``ts``:
    timestamps (only read with a window); ``exact``: normalised-text key -> last searched
    position; ``n_clusters``: clusters created so far; ``floor``: per kept document the lowest
    similarity of a document that joined it (1.0 when none; only with ``cluster_similarity``);
    ``floor_log``: when a list, each change of ``floor`` is appended as (row, old value)
    so that a dry run can undo it; ``trace``: position -> a list that the rule fills with the
    :class:`Considered` candidates of the document at that position (``explain``).
    """

    rep: npt.NDArray[np.int64]
    distance: npt.NDArray[np.int16]
    cluster: npt.NDArray[np.int64]
    status: npt.NDArray[np.int8]
    ts: npt.NDArray[np.float64]
    exact: dict[int, int] = field(default_factory=dict)
    n_clusters: int = 0
    floor: npt.NDArray[np.float32] | None = None
    floor_log: list[tuple[int, float]] | None = None
    trace: dict[int, list[Considered]] | None = None

    @classmethod
    def empty(cls, n: int, ts: npt.ArrayLike | None = None) -> Ledger:
        """Undecided arrays for ``n`` documents (``ts``: their timestamps, if a window is used)."""
        return cls(
            np.full(n, -1, np.int64),
            np.full(n, -1, np.int16),
            np.full(n, -1, np.int64),
            np.full(n, -1, np.int8),
            np.full(n, np.nan) if ts is None else np.asarray(ts, np.float64),
            floor=np.ones(n, np.float32),
        )

    def statuses(self) -> list[str]:
        """Status names, one per document."""
        return [STATUS_NAMES[s] for s in self.status.tolist()]


def horizons(ts: npt.ArrayLike, window: float, newest: float = -np.inf) -> npt.NDArray[np.float64]:
    """Per document ``h_g = floor(max(newest, t_0..t_g) - window)`` (input order): a kept
    document ``r`` with ``floor(t_r) < h_g`` has expired for ``g`` (a stream drops it from the
    index), in every engine and for any chunking. ``g`` is *late* when ``t_g < h_g``.

    >>> horizons([10.0, 30.0, 5.0], 10.0).tolist()
    [0.0, 20.0, 20.0]
    """
    m = np.fmax.accumulate(np.concatenate([[newest], np.asarray(ts, np.float64)]))[1:]
    return np.floor(m - window)


def decide_in_order(
    ledger: Ledger,
    order: npt.NDArray[np.int64],
    *,
    base: int,
    empty: Sequence[bool],
    keys: Sequence[int],
    ptr: Sequence[int],
    pos: Sequence[int],
    dist: Sequence[int],
    window: float | None = None,
    origin: int = 0,
    horizon: Sequence[float] | None = None,
    similarity: Sequence[float] | None = None,
    cluster_similarity: float | None = None,
) -> list[int]:
    """Decide the documents ``base + order[i]`` in that order; returns the new kept local rows.

    ``empty[l]`` and ``keys[l]`` describe local row ``l``; its accepted candidates are
    ``pos[ptr[l]:ptr[l + 1]]`` (global positions, sorted by (distance, position)) at distances
    ``dist[...]``. Candidates below ``base`` are kept documents decided earlier; those at or
    above ``base`` count only once decided as kept. ``origin``: the ledger's arrays start at
    that position (a saved state drops the rows no later decision can read); positions stay
    global. ``horizon[l]``: kept documents older than that (whole seconds) are out of reach
    of local row ``l`` (:func:`horizons`; ``keep='first'`` with a window).
    ``similarity[...]``: the candidates' similarities, read with ``cluster_similarity`` (module
    docs), which also needs ``ledger.floor``.
    """
    rep, dst, clu, sta = ledger.rep, ledger.distance, ledger.cluster, ledger.status
    exact = ledger.exact
    new: list[int] = []
    o = origin
    tight = cluster_similarity
    sims = _rule_similarities(ledger, similarity, tight)
    for li in order.tolist():
        g = base + li
        if empty[li]:
            sta[g - o], rep[g - o], clu[g - o] = EMPTY, g, ledger.n_clusters
            ledger.n_clusters += 1
            continue
        p = exact.get(keys[li])
        if p is not None:
            hz = None if horizon is None else horizon[li]
            if _join_exact_copy(ledger, g, p, o, window, hz):
                continue
        exact[keys[li]] = g
        c = _pick(ledger, g, range(ptr[li], ptr[li + 1]), pos, dist, sims, base, o, tight)
        if c < 0:
            sta[g - o], rep[g - o], clu[g - o] = UNIQUE, g, ledger.n_clusters
            ledger.n_clusters += 1
            new.append(li)
            continue
        r = pos[c]
        rep[g - o], clu[g - o], dst[g - o], sta[g - o] = r, clu[r - o], dist[c], DUPLICATE
    return new


def _pick(
    ledger: Ledger,
    g: int,
    cands: range,
    pos: Sequence[int],
    dist: Sequence[int],
    sims: Sequence[float],
    base: int,
    o: int,
    tight: float | None,
) -> int:
    """Step 3 of the rule (module docs) for document ``g``: the index in ``pos`` of the
    candidate it joins among ``cands``, -1 when none is a kept document (``o``: the ledger's
    origin). The kept candidates considered are noted in ``ledger.trace[g]`` when it exists."""
    notes = None if ledger.trace is None else ledger.trace.get(g)
    closest = -1  # the first kept candidate whose cluster refused g
    for c in cands:
        r = pos[c]
        if r >= base and (ledger.rep[r - o] != r or ledger.status[r - o] != UNIQUE):
            continue  # not decided yet, or not a kept document
        if tight is None:
            if notes is not None:
                notes.append(Considered(r, dist[c], None, None, "joined"))
            return c
        f = round(float(ledger.floor[r - o]), 4) if ledger.floor is not None else 1.0
        joined = _may_join(ledger, r - o, sims[c], tight)
        if notes is not None:
            notes.append(Considered(r, dist[c], sims[c], f, "joined" if joined else "refused"))
        if joined:
            return c
        closest = c if closest < 0 else closest
    if closest >= 0:  # refused by every cluster: the closest all the same
        _lower_floor(ledger, pos[closest] - o, sims[closest])
        if notes is not None:
            notes.append(Considered(pos[closest], dist[closest], sims[closest], None, "closest"))
    return closest


def _rule_similarities(
    ledger: Ledger, similarity: Sequence[float] | None, tight: float | None
) -> list[float]:
    """The candidates' similarities as the ``cluster_similarity`` rule reads them: rounded to
    4 decimals as every surface writes them, so that a state rebuilt from stored rows (the
    service's SQLite) has the same floors ([] without the rule)."""
    if tight is None:
        return []
    assert similarity is not None and ledger.floor is not None, "cluster_similarity needs both"
    return [round(float(x), 4) for x in similarity]


def _join_exact_copy(
    ledger: Ledger, g: int, p: int, o: int, window: float | None, horizon: float | None
) -> bool:
    """Step 2 of the rule (module docs): document ``g`` joins the cluster of ``p``, the earlier
    searched copy of its text, unless the window (or ``g``'s horizon) keeps them apart;
    returns whether it joined. ``o``: the ledger's origin (rows are positions minus it)."""
    rep, ts = ledger.rep, ledger.ts
    r = int(rep[p - o])
    if window is not None and not (
        abs(ts[g - o] - ts[r - o]) <= window
        and (horizon is None or math.floor(ts[r - o]) >= horizon)
    ):
        return False
    rep[g - o], ledger.cluster[g - o] = r, ledger.cluster[r - o]
    if p == r:
        ledger.status[g - o], ledger.distance[g - o] = EXACT_DUPLICATE, 0
    else:
        ledger.status[g - o], ledger.distance[g - o] = DUPLICATE, ledger.distance[p - o]
    return True


def _may_join(ledger: Ledger, row: int, s: float, q: float) -> bool:
    """Whether a document at similarity ``s`` may join the kept document at ``row`` (module
    docs); if so, ``floor[row]`` takes ``s`` into account (logged for a dry run)."""
    assert ledger.floor is not None
    if s + float(ledger.floor[row]) < 1.0 + q:
        return False
    _lower_floor(ledger, row, s)
    return True


def _lower_floor(ledger: Ledger, row: int, s: float) -> None:
    """A document at similarity ``s`` joined the kept document at ``row``: its floor becomes
    at most ``s`` (each change logged for a dry run)."""
    floor = ledger.floor
    assert floor is not None
    f = float(floor[row])
    if s < f:
        if ledger.floor_log is not None:
            ledger.floor_log.append((row, f))
        floor[row] = s
