"""Single-thread cost of the per-object lock (issue 22): ``Deduplicator.add`` and
``HammingIndex.add`` / ``query``, one document (row) per call, and the lock wrapper alone on
a no-op method. The anchor is the same script on the sources before the lock (another
``PYTHONPATH``), interleaved in one run under the shared lock::

    git archive 1391aa2 src | tar -x -C /tmp/base
    cp src/neardup/_native*.so /tmp/base/src/neardup/
    flock /tmp/neardup-bench.lock sh -c 'for i in 1 2; do
      PYTHONPATH=/tmp/base/src python benchmarks/bench_lock.py --tag before
      PYTHONPATH=src python benchmarks/bench_lock.py --tag after; done'
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


def _wrapper_ns(calls: int = 200_000) -> float | None:
    """ns per call that the lock wrapper adds to a no-op method (None before the lock)."""
    try:
        from neardup._threads import thread_safe
    except ImportError:
        return None

    class Plain:
        def noop(self) -> None:
            pass

    locked = thread_safe("noop")(type("Locked", (Plain,), {}))
    times = []
    for obj in (Plain(), locked()):
        times.append(_best(lambda o=obj: [o.noop() for _ in range(calls)] and calls, 5))
    return round((times[1] - times[0]) * 1e9, 1)


def bench(docs: int, rows: int, repeat: int) -> dict[str, Any]:
    texts = [f"story {i} on the harbour, {i * 7919 % 1000} ships and cranes" for i in range(docs)]
    fps = np.random.default_rng(1).integers(0, 2**63, rows, dtype=np.uint64)
    ix = HammingIndex(k=3)
    ix.add(np.arange(rows), fps)
    runs = {
        "dedup_add_us": partial(_dd_run, Deduplicator.add, texts),
        "index_add_us": partial(_ix_run, HammingIndex.add, fps),
        "index_query_us": partial(_q_run, HammingIndex.query, ix, fps),
    }
    out: dict[str, Any] = {name: round(_best(run, repeat) * 1e6, 3) for name, run in runs.items()}
    out["lock_wrapper_ns"] = _wrapper_ns()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--docs", type=int, default=20000)
    p.add_argument("--rows", type=int, default=50000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--tag", default="")
    a = p.parse_args()
    res = {"tag": a.tag, **bench(a.docs, a.rows, a.repeat)}
    res["loadavg"] = os.getloadavg()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
