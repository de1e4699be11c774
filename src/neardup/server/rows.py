"""Rows and answers: the store's rows of a decided batch (from the library's state columns),
the public decision of a stored row, and the prepared rows of the new documents of a batch.

>>> result(StoredRow(0, "a", None, 7, 0, None, -1, 0, None, None), None)["status"]
'unique'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neardup.dedup import Deduplicator
from neardup.dedup.decisions import STATUS_NAMES, Decisions
from neardup.server.store import NewRow, StoredRow, to_i64
from neardup.server.validate import Item

EMPTY = STATUS_NAMES.index("empty")


def result(row: StoredRow, dup_id: str | None) -> dict[str, Any]:
    """The public decision of a stored row."""
    return {
        "id": row.id,
        "status": STATUS_NAMES[int(row.status)],
        "duplicate_of": dup_id,
        "distance": None if row.duplicate_of is None else int(row.distance),
        "similarity": row.similarity,
        "threshold": row.threshold,
        "cluster_id": int(row.cluster_id),
    }


def similarity(d: Decisions, i: int) -> float | None:
    """The similarity that decided row ``i`` (4 decimals, as the CLI writes it), or None."""
    x = float(d.similarity[i])
    return None if x != x else round(x, 4)


def threshold(d: Decisions, i: int) -> float | None:
    """The threshold that applied to row ``i`` (as the CLI writes it), or None (NaN: kept,
    exact copies, no verifier)."""
    x = float(d.threshold[i])
    return None if x != x else x


def state_rows(dd: Deduplicator, new: list[Item], d: Decisions, store_text: bool) -> list[NewRow]:
    """The batch's rows from the library's state columns."""
    start = int(d.position[0])
    cols = dd.state.columns(start, start + len(new))
    fps, hi, lo = (to_i64(cols[c]) for c in ("fingerprint", "exact_key_hi", "exact_key_lo"))
    sketches = cols.get("sketch")
    dup, status = cols["duplicate_of"].tolist(), cols["status"].tolist()
    distance, cluster = cols["distance"].tolist(), cols["cluster_id"].tolist()
    searched = cols["searched"].tolist()
    sims = [similarity(d, i) for i in range(len(new))]
    needs = [threshold(d, i) for i in range(len(new))]
    rows = []
    for i, it in enumerate(new):
        kept = dup[i] < 0 and status[i] != EMPTY
        rows.append(
            NewRow(
                position=start + i,
                id=it.id,
                timestamp=it.timestamp,
                fingerprint=fps[i],
                sketch=sketches[i].tobytes() if kept and sketches is not None else None,
                exact_key_hi=hi[i],
                exact_key_lo=lo[i],
                status=status[i],
                duplicate_of=None if dup[i] < 0 else dup[i],
                distance=distance[i],
                cluster_id=cluster[i],
                searched=int(searched[i]),
                text=it.text if store_text else None,
                similarity=sims[i],
                threshold=needs[i],
            )
        )
    return rows


def answers(
    items: list[Item],
    known: dict[str, StoredRow],
    new: list[Item],
    decided: Decisions | None,
    pending_ids: dict[int, str],
    stored_ids: Callable[[list[int]], dict[int, str]],
) -> list[dict[str, Any]]:
    """The answers in input order: stored decisions for known ids, new ones otherwise
    (``duplicate_of`` named by id: from the batch, the batches not yet on disk, the store)."""
    ids: dict[int, str] = {}
    want = [r.duplicate_of for r in known.values() if r.duplicate_of is not None]
    if decided is not None:
        ids = {int(p): it.id for p, it in zip(decided.position, new, strict=True)}
        want += [int(p) for p in decided.duplicate_of if p >= 0 and int(p) not in ids]
    missing = []
    for p in want:
        if p in pending_ids:
            ids[p] = pending_ids[p]
        elif p not in ids:
            missing.append(p)
    ids.update(stored_ids(missing))
    out: list[dict[str, Any]] = []
    fresh = iter(range(len(new)))
    for it in items:
        row = known.get(it.id)
        if row is not None:
            dup_of = row.duplicate_of
            out.append(result(row, None if dup_of is None else ids.get(dup_of)))
            continue
        assert decided is not None
        i = next(fresh)
        dup = int(decided.duplicate_of[i])
        out.append(
            {
                "id": it.id,
                "status": STATUS_NAMES[int(decided.status[i])],
                "duplicate_of": None if dup < 0 else ids.get(dup),
                "distance": None if dup < 0 else int(decided.distance[i]),
                "similarity": similarity(decided, i),
                "threshold": threshold(decided, i),
                "cluster_id": int(decided.cluster_id[i]),
            }
        )
    return out
