"""Markdown tables for docs/ACCURACY.md from benchmarks/results/*.jsonl.

PYTHONPATH=src python benchmarks/report_tables.py
"""

from __future__ import annotations

import json
from pathlib import Path

RES = Path("benchmarks/results")


def load(name: str) -> list[dict]:  # type: ignore[type-arg]
    p = RES / name
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


def feature_table() -> None:
    data = {
        c: [r for r in load(f"sweep_{c}.jsonl") if r["bucket"] == "all"]
        for c in ("reuters", "shopping")
    }
    configs = list(dict.fromkeys(r["config"] for r in data["reuters"]))
    print(
        "| features (plain SimHash) | Reuters F1 @k=3 | Reuters best F1 (k) "
        "| shopping F1 @k=3 | shopping best F1 (k) |"
    )
    print("|---|---|---|---|---|")
    for cfg in configs:
        cells = []
        for c in ("reuters", "shopping"):
            rows = [r for r in data[c] if r["config"] == cfg]
            if not rows:
                cells += ["-", "-"]
                continue
            at3 = next(r for r in rows if r["k"] == 3)
            best = max(rows, key=lambda r: r["f1"])
            cells += [f"{at3['f1']:.3f}", f"{best['f1']:.3f} ({best['k']})"]
        print(f"| {cfg} | " + " | ".join(cells) + " |")


def bucket_table(config: str, k: int) -> None:
    print(f"\n| bucket ({config}, k={k}) | corpus | must pairs | precision | recall | F1 |")
    print("|---|---|---|---|---|---|")
    for c in ("reuters", "shopping"):
        for r in load(f"sweep_{c}.jsonl"):
            if r["config"] == config and r["k"] == k and r["bucket"] != "all":
                print(
                    f"| {r['bucket']} | {c} | {r['must_pairs']} | {r['precision']:.3f} "
                    f"| {r['recall']:.3f} | {r['f1']:.3f} |"
                )


if __name__ == "__main__":
    feature_table()
    bucket_table("shingle3-none", 8)
    bucket_table("joinedchar5-none", 8)
