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


def planted_tables() -> None:
    for lang in ("en", "zh"):
        rows = load(f"planted_{lang}.jsonl")
        if not rows:
            continue
        print(f"\n| planted {lang}: method | bucket | 1 % | 2 % | 5 % | 10 % | 20 % |")
        print("|---|---|---|---|---|---|---|")
        methods = list(dict.fromkeys(r["method"] for r in rows))
        for m in methods:
            for b in ("short", "medium", "long"):
                cells = [
                    next(
                        (
                            f"{r['recall']:.3f}"
                            for r in rows
                            if r.get("method") == m
                            and r.get("bucket") == b
                            and r.get("rate") == rate
                            and r.get("kind") == "all"
                        ),
                        "-",
                    )
                    for rate in (0.01, 0.02, 0.05, 0.1, 0.2)
                ]
                print(f"| {m} | {b} | " + " | ".join(cells) + " |")
        print(f"\n| planted {lang}, neardup, 5 % edits: kind | medium | long |")
        print("|---|---|---|")
        kinds = [
            k
            for k in dict.fromkeys(r.get("kind") for r in rows)
            if k not in (None, "all", "natural+planted")
        ]
        for k in kinds:
            cells = [
                next(
                    (
                        f"{r['recall']:.3f}"
                        for r in rows
                        if r.get("method") == "neardup"
                        and r.get("bucket") == b
                        and r.get("rate") == 0.05
                        and r.get("kind") == k
                    ),
                    "-",
                )
                for b in ("medium", "long")
            ]
            print(f"| {k} | " + " | ".join(cells) + " |")
        for r in rows:
            if r.get("kind") == "natural+planted":
                print(
                    f"<!-- {lang} {r['method']}: docs {r['docs']} P {r['precision']:.4f} "
                    f"seconds {r['seconds']} -->"
                )


if __name__ == "__main__":
    feature_table()
    bucket_table("shingle3-none", 8)
    bucket_table("joinedchar5-none", 8)
    planted_tables()
