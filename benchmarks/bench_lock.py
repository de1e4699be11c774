"""Single-thread cost of the per-object lock (issue 22): ``Deduplicator.add`` and
``HammingIndex.add`` / ``query`` one document (row) per call, with the lock and, as the
anchor in the same run, the same method unwrapped (``__wrapped__``: no lock). Run under the
shared lock::

    flock /tmp/neardup-bench.lock python benchmarks/bench_lock.py --docs 20000 --rows 50000
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup import Deduplicator
from neardup.index import HammingIndex


def _best(run: Callable[[], int], repeat: int) -> float:
    """Best seconds per call over ``repeat`` timed runs (each returns its call count)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        calls = run()
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def _method(cls: type, name: str, unlocked: bool) -> Callable[..., Any]:
    m = getattr(cls, name)
    return getattr(m, "__wrapped__", m) if unlocked else m  # type: ignore[no-any-return]


def _dd_run(add: Callable[..., Any], texts: list[str]) -> int:
    dd = Deduplicator()
    for i, t in enumerate(texts):
        add(dd, t, id=i)
    return len(texts)


def _ix_run(add: Callable[..., Any], fps: npt.NDArray[np.uint64]) -> int:
    ix = HammingIndex(k=3)
    for i in range(len(fps)):
        add(ix, [i], fps[i : i + 1])
    return len(fps)


def _q_run(query: Callable[..., Any], ix: HammingIndex, fps: npt.NDArray[np.uint64]) -> int:
    for i in range(0, len(fps), 10):
        query(ix, int(fps[i]))
    return len(fps) // 10


def bench(docs: int, rows: int, repeat: int) -> dict[str, Any]:
    texts = [f"story {i} on the harbour, {i * 7919 % 1000} ships and cranes" for i in range(docs)]
    fps = np.random.default_rng(1).integers(0, 2**63, rows, dtype=np.uint64)
    ix = HammingIndex(k=3)
    ix.add(np.arange(rows), fps)
    out: dict[str, Any] = {}
    for unlocked in (True, False, True, False):  # interleaved: drift hits both alike
        tag = "unlocked" if unlocked else "locked"
        runs = {
            "dedup_add": partial(_dd_run, _method(Deduplicator, "add", unlocked), texts),
            "index_add": partial(_ix_run, _method(HammingIndex, "add", unlocked), fps),
            "index_query": partial(_q_run, _method(HammingIndex, "query", unlocked), ix, fps),
        }
        for name, run in runs.items():
            us = _best(run, repeat) * 1e6
            key = f"{name}_{tag}_us"
            out[key] = round(min(us, out.get(key, us)), 3)
    for name in ("dedup_add", "index_add", "index_query"):
        out[f"{name}_ratio"] = round(out[f"{name}_locked_us"] / out[f"{name}_unlocked_us"], 3)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--rows", type=int, default=50000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    res = bench(a.docs, a.rows, a.repeat)
    res["loadavg"] = os.getloadavg()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
