"""Seeds -> passages: merge the shared grams of one document pair into passage pairs.

A *seed* is a gram found in both texts: its token range in the query and in the source. Seeds
that lie within ``gap`` units of a passage on *both* sides join it (so light edits, which cut a
few grams out, and swapped sentences, which stay inside the passage's box, still make one
passage); the passage is then extended token by token where both texts agree exactly, and
kept when it is at least ``min_units`` long on both sides.

>>> from neardup.overlap.tokens import grams, tokenize
>>> import numpy as np
>>> a = tokenize("x y z one two three four five six seven")
>>> b = tokenize("one two three four five six seven q r")
>>> seeds = np.array([[3, 5, 0, 2], [5, 7, 2, 4]])  # query tokens [3, 5) = source [0, 2)
>>> found = align(a, b, seeds, near=4, gap=8, min_units=8)
>>> [(p.q_first, p.q_last, p.d_first, p.d_last) for p in found]
[(3, 10, 0, 7)]
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from neardup.overlap.tokens import Grams, Tokens

__all__ = ["Alignment", "align", "fine_seeds", "gram_share", "gram_share_counts"]

# seeds a group without a strong seed needs to join a passage (FINE_GROUP in overlap_pairs.c)
FINE_GROUP = 4
EXTEND = 6  # seeds a group without a strong seed needs to extend a passage (overlap_pairs.c)
# a run of diagonals is part of a passage when it holds 1 / BAND_SHARE of its strong seeds: a
# swapped sentence of a heavy rewrite keeps few strong seeds (4 -> 8: zh heavy +0.01, seed 1)
BAND_SHARE = 8
_FAR = 1 << 62


@dataclass(frozen=True)
class Alignment:
    """One passage pair in tokens: query ``[q_first, q_last)``, source ``[d_first, d_last)``."""

    q_first: int
    q_last: int
    d_first: int
    d_last: int
    seeds: int


def _clusters(box: npt.NDArray[np.int64], near: int, gap: int) -> list[list[int]]:
    """Group seed boxes (rows qlo, qhi, dlo, dhi in units, strong 0/1): in query order, a
    seed joins an open group when it lies within ``near`` of the group on the query side and
    of the group's last seed on the source side; drop lone seeds, join the groups within
    ``near``, keep the groups with a strong seed or ``FINE_GROUP`` seeds, join those that lie
    within ``gap`` and keep the joined groups that hold a strong seed (a lone short phrase is
    not a copy); returns lists of [qlo, qhi, dlo, dhi, seeds, strong seeds]."""
    order = np.lexsort((box[:, 2], box[:, 0]))
    done: list[list[int]] = []
    open_: list[list[int]] = []
    for i in order.tolist():
        qlo, qhi, dlo, dhi, strong = box[i].tolist()
        still: list[list[int]] = []
        for c in open_:
            (still if c[1] + near >= qlo else done).append(c)
        open_ = still
        for c in reversed(open_):
            # near the cluster's last seed on the source side: a seed off its diagonal (a
            # short gram repeated nearby) does not stretch the cluster
            if dlo <= c[8] + near and dhi >= c[7] - near:
                c[1], c[2], c[3] = max(c[1], qhi), min(c[2], dlo), max(c[3], dhi)
                c[4], c[5] = c[4] + 1, c[5] + strong
                c[6], c[7], c[8] = qhi, dlo, dhi
                break
        else:
            open_.append([qlo, qhi, dlo, dhi, 1, strong, qhi, dlo, dhi])
    done += open_
    # fields 6-9: the extent of the groups holding a strong seed or EXTEND seeds (else empty)
    done = [c[:6] + (c[:4] if c[5] or c[4] >= EXTEND else [_FAR, -_FAR, _FAR, -_FAR]) for c in done]
    first = _merge_boxes(done, near, min_count=2, strong=0)  # lone seeds go first
    # a group of short grams only (a heavy rewrite's middle) joins within gap, when it has
    # FINE_GROUP seeds; what is not joined to a strong seed is dropped, and a passage ends at
    # its outermost strong groups or groups of EXTEND seeds (a few short grams bridge strong
    # groups, they do not extend them: "of the" near a copy is not part of it)
    first = [b for b in first if b[5] >= 1 or b[4] >= FINE_GROUP]
    final = _merge_boxes(first, gap, min_count=2, strong=0)
    return [b[6:10] + b[4:6] for b in final if b[5] >= 1]


def _near(a: list[int], b: list[int], gap: int) -> bool:
    return a[0] <= b[1] + gap and b[0] <= a[1] + gap and a[2] <= b[3] + gap and b[2] <= a[3] + gap


def _merge_boxes(
    boxes: list[list[int]], gap: int, min_count: int = 1, strong: int = 1
) -> list[list[int]]:
    boxes = [b for b in boxes if b[4] >= min_count and b[5] >= strong]
    merged = True
    while merged and len(boxes) > 1:
        merged = False
        boxes.sort()
        out: list[list[int]] = []
        for b in boxes:
            for c in out:
                if _near(b, c, gap):
                    c[0], c[1] = min(c[0], b[0]), max(c[1], b[1])
                    c[2], c[3] = min(c[2], b[2]), max(c[3], b[3])
                    c[4], c[5] = c[4] + b[4], c[5] + b[5]
                    c[6], c[7] = min(c[6], b[6]), max(c[7], b[7])
                    c[8], c[9] = min(c[8], b[8]), max(c[9], b[9])
                    merged = True
                    break
            else:
                out.append(b)
        boxes = out
    return boxes


def _extend(q: Tokens, d: Tokens, qi: int, di: int, step: int) -> tuple[int, int]:
    """Walk from the aligned tokens (qi, di) while both texts agree (step -1: leftwards from
    the tokens before them; +1: rightwards from them)."""
    qh, dh = q.hashes, d.hashes
    if step < 0:
        while qi > 0 and di > 0 and qh[qi - 1] == dh[di - 1]:
            qi, di = qi - 1, di - 1
    else:
        while qi < qh.size and di < dh.size and qh[qi] == dh[di]:
            qi, di = qi + 1, di + 1
    return qi, di


def align(
    q: Tokens,
    d: Tokens,
    seeds: npt.NDArray[np.int64],
    *,
    strong: int | None = None,
    near: int,
    gap: int,
    min_units: int,
) -> list[Alignment]:
    """Passages of the query ``q`` taken from ``d``; ``seeds`` rows: (q_first, q_last,
    d_first, d_last) token ranges of shared grams, the first ``strong`` of them (default:
    all) long-gram seeds, of which each passage needs one; ``min_units`` in gram units
    (:func:`~neardup.overlap.tokens.gram_units`)."""
    if seeds.size == 0:
        return []
    is_strong = np.arange(seeds.shape[0]) < (seeds.shape[0] if strong is None else strong)
    box = np.stack(
        [
            q.units[seeds[:, 0]],
            q.units[seeds[:, 1]],
            d.units[seeds[:, 2]],
            d.units[seeds[:, 3]],
            is_strong.astype(np.int64),
        ],
        axis=1,
    )
    out = []
    for qlo, qhi, dlo, dhi, count, _ in _clusters(box, near, gap):
        inside = (box[:, 0] >= qlo) & (box[:, 1] <= qhi) & (box[:, 2] >= dlo) & (box[:, 3] <= dhi)
        # the ends come from the seeds on the passage's diagonals (a phrase the source repeats
        # elsewhere does not stretch the source span)
        diag = box[:, 2] - box[:, 0]
        lo, hi = _band(np.sort(diag[inside & is_strong]), near, gap)
        s = _ends(seeds[inside & (diag >= lo) & (diag <= hi)])
        first_q, first_d = s[np.argmin(s[:, 0])], s[np.argmin(s[:, 2])]
        last_q, last_d = s[np.argmax(s[:, 1])], s[np.argmax(s[:, 3])]
        q0 = _extend(q, d, int(first_q[0]), int(first_q[2]), -1)[0]
        d0 = _extend(q, d, int(first_d[0]), int(first_d[2]), -1)[1]
        q1 = _extend(q, d, int(last_q[1]), int(last_q[3]), 1)[0]
        d1 = _extend(q, d, int(last_d[1]), int(last_d[3]), 1)[1]
        # lengths in gram units (tokens.gram_units: units + tokens): 10 words or 15 Han characters
        if (
            min(q.units[q1] - q.units[q0] + q1 - q0, d.units[d1] - d.units[d0] + d1 - d0)
            >= min_units
        ):
            out.append(Alignment(q0, q1, d0, d1, count))
    return out


def _ends(s: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The seeds of a passage that may set its ends: those whose gram matches one place of
    the passage on each side (all of them when none does). A phrase repeated in one text
    ("said the company") matches several places of the other: taken as an end it stretches
    that side's span to a far repeat, and the spans no longer cover corresponding text.

    >>> _ends(np.array([[0, 4, 10, 14], [0, 4, 30, 34], [5, 9, 15, 19]])).tolist()
    [[5, 9, 15, 19]]
    """
    once = _single(s[:, 0], s[:, 1]) & _single(s[:, 2], s[:, 3])
    return s[once] if once.any() else s


def _single(first: npt.NDArray[np.int64], last: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Whether each range (first, last) occurs once among the ranges."""
    _, inverse, counts = np.unique(
        np.stack([first, last], axis=1), axis=0, return_inverse=True, return_counts=True
    )
    once: npt.NDArray[np.bool_] = counts[inverse.reshape(-1)] == 1
    return once


def _band(diags: npt.NDArray[np.int64], near: int, gap: int) -> tuple[int, int]:
    """The diagonals (source minus query offset, sorted) of a passage's strong seeds split
    where two lie more than ``gap`` apart; the range of the runs holding at least an eighth of
    them (a swapped sentence keeps its run, a phrase repeated elsewhere does not; the largest
    run when none does), widened by ``near``.

    >>> _band(np.array([-900, 0, 1, 2, 3, 4, 5, 30, 35, 700]), near=8, gap=60)
    (-8, 43)
    >>> _band(np.arange(0, 1000, 100), near=0, gap=60)
    (0, 0)
    """
    n = int(diags.size)
    cuts = [0, *(i for i in range(1, n) if diags[i] - diags[i - 1] > gap), n]
    runs = list(pairwise(cuts))
    kept = [r for r in runs if BAND_SHARE * (r[1] - r[0]) >= n]
    if not kept:
        kept = [max(runs, key=lambda r: (r[1] - r[0], -r[0]))]
    return int(diags[kept[0][0]]) - near, int(diags[kept[-1][1] - 1]) + near


def gram_share(q_hashes: npt.NDArray[np.uint64], d_hashes: npt.NDArray[np.uint64]) -> float:
    """Share of the distinct grams of a query passage that the source passage also holds.

    >>> gram_share(np.array([1, 2, 3, 4], dtype=np.uint64), np.array([2, 4, 9], dtype=np.uint64))
    0.5
    """
    num, den = gram_share_counts(q_hashes, d_hashes)
    return num / den if den else 0.0


def gram_share_counts(
    q_hashes: npt.NDArray[np.uint64], d_hashes: npt.NDArray[np.uint64]
) -> tuple[int, int]:
    """:func:`gram_share` as (shared distinct grams, distinct grams)."""
    qs = np.unique(q_hashes)
    return int(np.isin(qs, d_hashes).sum()), int(qs.size)


def fine_seeds(
    q: Tokens,
    d: Tokens,
    qg: Grams,
    dg: Grams,
    anchors: npt.NDArray[np.int64],
    reach: int,
    fanout: int = 4,
) -> npt.NDArray[np.int64]:
    """Seeds of the shorter grams ``qg``/``dg`` shared by ``q`` and ``d`` within ``reach``
    units of the ``anchors`` (the long-gram seeds), so that a rewrite that leaves few long
    grams intact still fills its passage; a gram repeated more than ``fanout`` times in ``d``
    is left out (``of the``)."""
    qlo, qhi = q.units[anchors[:, 0].min()] - reach, q.units[anchors[:, 1].max()] + reach
    dlo, dhi = d.units[anchors[:, 2].min()] - reach, d.units[anchors[:, 3].max()] + reach
    qu0, qu1 = q.units[qg.first], q.units[qg.last]
    du0, du1 = d.units[dg.first], d.units[dg.last]
    qidx = np.flatnonzero((qu0 >= qlo) & (qu1 <= qhi))
    didx = np.flatnonzero((du0 >= dlo) & (du1 <= dhi))
    order = didx[np.argsort(dg.hashes[didx], kind="stable")]
    dh = dg.hashes[order]
    lo = np.searchsorted(dh, qg.hashes[qidx], "left")
    cnt = np.searchsorted(dh, qg.hashes[qidx], "right") - lo
    cnt[cnt > fanout] = 0
    total = int(cnt.sum())
    if not total:
        return np.zeros((0, 4), dtype=np.int64)
    qrep = np.repeat(qidx, cnt)
    rows = order[np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)]
    return np.stack([qg.first[qrep], qg.last[qrep], dg.first[rows], dg.last[rows]], axis=1)
