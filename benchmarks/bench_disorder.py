"""``--max-disorder``: how far behind a newer row real news rows come, and the duplicates a window
finds on unsorted input with and without the buffer (issue 38). Accuracy only, no timings.

    PYTHONPATH=src python benchmarks/bench_disorder.py            (~20 s)

1. Reuters-21578 in file order: per row, how far its date is behind the newest date before it
   (percentiles, and the rows more than 24 h / 48 h behind: the late rows at that bound).
2. 900 rows: 300 Reuters and 300 People's Daily articles over 20 days plus 300 edited copies
   (150 at 5 %, 150 at 10 % substituted words or characters), each 0-35 h after its original,
   ``--window 36h``. Written sorted, hour-cycled (by hour of the day, then time: rows come up to
   20 days behind a newer one) and day-cycled (by hour of the day within each day: up to 24 h).
   Non-unique decisions per ``--max-disorder`` (the buffer's order, dedup/disorder.py, fed to
   a Deduplicator as the CLI does) and the rows it names late.
"""

from __future__ import annotations

import gzip
import json

import numpy as np

from neardup import Deduplicator
from neardup.dedup.disorder import DEFAULT_MAX_DISORDER, release_order
from neardup.eval.corpora import corpora_dir
from neardup.eval.perturb import perturb
from neardup.io import parse_timestamp

CORPORA = corpora_dir()
HOUR, DAY = 3600.0, 86400.0


def _rows(name: str) -> list[dict[str, object]]:
    with gzip.open(CORPORA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def reuters_lags() -> None:
    ts = []
    for r in _rows("reuters21578/docs.jsonl.gz"):
        try:
            ts.append(parse_timestamp(r["date"]))
        except (KeyError, ValueError):
            continue
    t = np.asarray(ts)
    lag = np.maximum.accumulate(t) - t
    q = {p: np.percentile(lag, p) / HOUR for p in (99, 99.9, 100)}
    print(f"Reuters file order: {t.size:,} dated rows, {int((lag > 0).sum()):,} behind a newer one")
    print("  lag p99 / p99.9 / max: " + " / ".join(f"{v:.1f} h" for v in q.values()))
    for bound in (24, 48):
        late = release_order(t, bound * HOUR)[1].size
        print(f"  --max-disorder {bound}h: {late:,} late rows")


def planted(seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    en = [str(r["text"]) for r in _rows("reuters21578/docs.jsonl.gz") if len(str(r["text"])) > 400]
    zh = [str(r["text"]) for r in _rows("peoples_daily_199801/articles.jsonl.gz")]
    zh = [t for t in zh if len(t) > 300]
    texts = [en[i] for i in rng.choice(len(en), 300, replace=False)]
    texts += [zh[i] for i in rng.choice(len(zh), 300, replace=False)]
    ts = list(rng.uniform(0, 20 * DAY, len(texts)))
    for k, base in enumerate(rng.choice(len(texts), 300, replace=False).tolist()):
        texts.append(perturb(texts[base], "substitute", 0.05 if k < 150 else 0.10, seed=rng))
        ts.append(ts[base] + rng.uniform(0, 35 * HOUR))
    return texts, 1_700_000_000 + np.asarray(ts)


def found(texts: list[str], ts: np.ndarray, arrival: np.ndarray, bound: float) -> tuple[int, int]:
    order, late = release_order(ts[arrival], bound)
    rows = arrival[order]
    d = Deduplicator(window=36 * HOUR).feed([texts[i] for i in rows], ts[rows].tolist())
    return int((d.status != 0).sum() - (d.statuses.count("empty"))), int(late.size)


def main() -> None:
    reuters_lags()
    texts, ts = planted()
    hour = (ts % DAY) // HOUR
    orders = {
        "sorted": np.argsort(ts, kind="stable"),
        "hour-cycled": np.lexsort((ts, hour)),
        "day-cycled": np.lexsort((hour, ts // DAY)),
    }
    bounds = {
        "0": 0.0,
        "24h": DAY,
        f"{DEFAULT_MAX_DISORDER / HOUR:g}h (default)": DEFAULT_MAX_DISORDER,
    }
    bounds["21d"] = 21 * DAY
    print("\n| input order | " + " | ".join(f"--max-disorder {b}" for b in bounds) + " |")
    print("|---|" + "---:|" * len(bounds))
    for name, arrival in orders.items():
        cells = [found(texts, ts, arrival, b) for b in bounds.values()]
        print(f"| {name} | " + " | ".join(f"{n} ({late} late)" for n, late in cells) + " |")


if __name__ == "__main__":
    main()
