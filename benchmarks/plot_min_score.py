"""Precision and recall of ``neardup overlap`` against ``--min-score`` (issue 36), as a plot.

Planted sets: the PAN-style sets of ``bench_overlap.py --raw`` (background with its templates
kept), character precision and recall per obfuscation, and the share of untouched hosts that
get a passage. Real copies: Clough & Stevenson (answers written by students from five
articles; the articles as reference), the share of answers linked to their article per class
(``non`` is the false-positive rate). Every setting runs the finder again (``min_score`` acts
before the sources rule, so filtering one run's passages afterwards would not be the same).

    NEARDUP_CORPORA=../shared/corpora python benchmarks/plot_min_score.py --seed 1 --seed 3

writes ``benchmarks/results/min_score.jsonl`` and ``docs/img/overlap_min_score.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

sys.path.insert(0, str(Path(__file__).parent))
from bench_overlap import OBFUSCATIONS, build_set, clough
from neardup.eval.pan import pan_scores
from neardup.overlap import OverlapFinder

SCORES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
RESULTS = Path("benchmarks/results/min_score.jsonl")
IMAGE = Path("docs/img/overlap_min_score.png")


def pan_row(data: dict[str, Any], min_score: float) -> dict[str, Any]:
    """Precision, recall per obfuscation and untouched hosts reported at ``min_score``."""
    texts, ids = [d["text"] for d in data["docs"]], [d["id"] for d in data["docs"]]
    dets = [p.to_dict() for p in OverlapFinder(min_score=min_score).find(texts, ids=ids)]
    kinds = data["kinds"]
    row: dict[str, Any] = {}
    for how in OBFUSCATIONS:
        cases = [c for c in data["cases"] if c["obfuscation"] == how]
        scores = pan_scores(cases, [d for d in dets if kinds.get(d["id"]) == how]).as_dict()
        row[how] = {"precision": scores["precision"], "recall": scores["recall"]}
    untouched = [h for h, k in kinds.items() if k == "untouched"]
    reported = {d["id"] for d in dets}
    row["untouched"] = sum(h in reported for h in untouched) / len(untouched)
    return row


def measure(seeds: list[int], hosts: int, background: int) -> list[dict[str, Any]]:
    rows = []
    for lang in ("en", "zh"):
        for seed in seeds:
            data = build_set(lang, hosts, background, seed, raw=True)
            for s in SCORES:
                rows.append(
                    {"set": f"pan-{lang}", "seed": seed, "min_score": s, **pan_row(data, s)}
                )
                print(json.dumps(rows[-1]), flush=True)
    for s in SCORES:
        per_class = clough({"min_score": s})["per_class"]
        share = {c: _ratio(v) for c, v in per_class.items()}
        rows.append({"set": "clough", "min_score": s, **share})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def plot(rows: list[dict[str, Any]]) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, lang in zip(axes[:2], ("en", "zh"), strict=True):
        pan = [r for r in rows if r["set"] == f"pan-{lang}"]
        for how, colour in zip(OBFUSCATIONS, ("tab:blue", "tab:orange", "tab:red"), strict=True):
            for measure_, style in (("precision", "-"), ("recall", "--")):
                xs = sorted({r["min_score"] for r in pan})
                ys = [
                    _mean([_value(r[how], measure_) for r in pan if r["min_score"] == x])
                    for x in xs
                ]
                ax.plot(xs, ys, style, color=colour, marker="o", ms=3, label=f"{how} {measure_}")
        xs = sorted({r["min_score"] for r in pan})
        ys = [_mean([r["untouched"] for r in pan if r["min_score"] == x]) for x in xs]
        ax.plot(xs, ys, ":", color="black", marker="x", ms=4, label="untouched hosts reported")
        seeds = sorted({r["seed"] for r in pan})
        ax.set_title(f"PAN-style {lang}, templates kept (seeds {', '.join(map(str, seeds))})")
        ax.set_xlabel("--min-score")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("character precision (-) / recall (--)")
    axes[0].legend(fontsize=7, loc="center left")
    ax = axes[2]
    cl = sorted((r for r in rows if r["set"] == "clough"), key=lambda r: r["min_score"])
    for cls in ("cut", "light", "heavy", "non"):
        ax.plot([r["min_score"] for r in cl], [r[cls] for r in cl], marker="o", ms=3, label=cls)
    ax.set_title("Clough & Stevenson: answers linked to their article")
    ax.set_xlabel("--min-score")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    IMAGE.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMAGE, dpi=110)


def _value(scores: dict[str, float], name: str) -> float:
    """A measure of one obfuscation; precision without any detection is undefined (NaN)."""
    if name == "precision" and scores["recall"] == 0 and scores["precision"] == 0:
        return float("nan")
    return scores[name]


def _ratio(linked: str) -> float:
    """``"17/19"`` -> 0.894..."""
    part, whole = linked.split("/")
    return int(part) / int(whole)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, action="append", help="PAN set seeds (default 1)")
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--background", type=int, default=4000)
    ap.add_argument("--plot-only", action="store_true", help="redraw from the results file")
    args = ap.parse_args()
    if args.plot_only:
        rows = [json.loads(line) for line in RESULTS.read_text().splitlines()]
    else:
        rows = measure(args.seed or [1], args.hosts, args.background)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plot(rows)


if __name__ == "__main__":
    main()
