"""Test helpers: a fingerprinter whose fingerprints are written in the text, and a reference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class TableFingerprinter:
    """Text ``"<int>:<tag>"`` has fingerprint ``<int>``; blank text has no features."""

    config_id = "table"

    def get_config(self) -> dict[str, Any]:
        return {"bits": 64}

    def fingerprint_many(
        self, texts: Sequence[str], *, return_mask: bool = False, n_jobs: int = 1
    ) -> Any:
        empty = np.array([not t.strip() for t in texts], dtype=bool)
        fps = np.array(
            [0 if e else int(t.split(":")[0]) for t, e in zip(texts, empty, strict=True)],
            dtype=np.uint64,
        )
        return (fps, empty) if return_mask else fps


def reference(
    texts: list[str],
    k: int,
    ts: list[float] | None = None,
    window: float | None = None,
    order: list[int] | None = None,
) -> list[tuple]:
    """Brute-force implementation of the documented rules: (status, dup_of, distance)."""
    fp = TableFingerprinter()
    fps, empty = fp.fingerprint_many(texts, return_mask=True)
    fps = [int(x) for x in fps]
    norm = [" ".join(t.casefold().split()) for t in texts]
    out: dict[int, tuple] = {}
    first_copy: dict[str, int] = {}
    kept: list[int] = []
    for i in order if order is not None else range(len(texts)):
        if empty[i]:
            out[i] = ("empty", -1, -1)
            continue
        near = window is None or ts is None
        p = first_copy.get(norm[i])
        if p is not None:
            r = p if out[p][1] < 0 else out[p][1]
            if near or abs(ts[i] - ts[r]) <= window:
                out[i] = ("exact_duplicate", r, 0) if p == r else ("duplicate", r, out[p][2])
                continue
        first_copy[norm[i]] = i
        cands = [
            (bin(fps[i] ^ fps[r]).count("1"), r)
            for r in kept
            if near or abs(ts[i] - ts[r]) <= window
        ]
        cands = [c for c in cands if c[0] <= k]
        if cands:
            d, r = min(cands)
            out[i] = ("duplicate", r, d)
        else:
            out[i] = ("unique", -1, -1)
            kept.append(i)
    return [out[i] for i in range(len(texts))]
