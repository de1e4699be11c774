"""Plots for docs/ACCURACY.md from the JSONL results of the sweep and planted benchmarks.

PYTHONPATH=src python benchmarks/plot_accuracy.py
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RES = Path("benchmarks/results")
IMG = Path("docs/img")
PR_CONFIGS = (
    "word-tf",
    "word-tfidf",
    "shingle3-none",
    "shingle4-none",
    "char5-tf",
    "shingle3-none-128",
    "joinedchar5-none",
)


def rows(name: str) -> list[dict]:  # type: ignore[type-arg]
    path = RES / name
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def pr_curves() -> None:
    for corpus in ("reuters", "shopping"):
        data = [r for r in rows(f"sweep_{corpus}.jsonl") if r["bucket"] == "all"]
        if not data:
            continue
        fig, ax = plt.subplots(figsize=(6.5, 5))
        for cfg in PR_CONFIGS:
            pts = sorted((r["k"], r["recall"], r["precision"]) for r in data if r["config"] == cfg)
            if not pts:
                continue
            ax.plot([p[1] for p in pts], [p[2] for p in pts], marker="o", ms=3, label=cfg)
            for k, rec, prec in pts:
                if k in (3, 8, 16, 24) or (k == 12 and "128" not in cfg):
                    ax.annotate(str(k), (rec, prec), fontsize=6)
        ax.set_xlabel("recall (Jaccard >= 0.8 pairs)")
        ax.set_ylabel("precision (pairs in clusters with Jaccard >= 0.5)")
        ax.set_title(f"{corpus}: plain SimHash, k = 0..12 (0..24 for 128 bits)")
        ax.set_xlim(0.4, 1.01)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
        fig.tight_layout()
        fig.savefig(IMG / f"pr_{corpus}.png", dpi=110)
        plt.close(fig)


def verify_curves(config: str, verifier: str = "mh64x8") -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, corpus in zip(axes, ("reuters", "shopping"), strict=False):
        data = [
            r
            for r in rows(f"verify_{corpus}.jsonl")
            if r["bucket"] == "all" and r["config"] == config and r["verifier"] == verifier
        ]
        for th in sorted({r["threshold"] for r in data}):
            pts = sorted((r["candidate_k"], r["f1"]) for r in data if r["threshold"] == th)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=f"t={th}")
        plain = sorted(
            (r["k"], r["f1"])
            for r in rows(f"sweep_{corpus}.jsonl")
            if r["bucket"] == "all" and r["config"] == config
        )
        if plain:
            ax.plot([p[0] for p in plain], [p[1] for p in plain], "k--", label="no verification")
        ax.set_title(f"{corpus}: {config}, verifier {verifier}")
        ax.set_xlabel("candidate_k")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("F1")
    axes[0].set_ylim(0.5, 1.005)
    axes[1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(IMG / f"verify_{config}.png", dpi=110)
    plt.close(fig)


def planted_curves(method: str = "neardup") -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, lang in zip(axes, ("en", "zh"), strict=False):
        data = [
            r
            for r in rows(f"planted_{lang}.jsonl")
            if r.get("method") == method and r.get("kind") == "all"
        ]
        for bucket in ("short", "medium", "long"):
            pts = sorted((r["rate"], r["recall"]) for r in data if r["bucket"] == bucket)
            ax.plot([100 * p[0] for p in pts], [p[1] for p in pts], marker="o", label=bucket)
        ax.set_title(f"planted copies ({lang}): {method}")
        ax.set_xlabel("edit rate (%)")
        ax.set_xscale("log")
        ax.set_xticks([1, 2, 5, 10, 20], ["1", "2", "5", "10", "20"])
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("recall of planted pairs")
    axes[0].set_ylim(0, 1.02)
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(IMG / f"planted_{method}.png", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    IMG.mkdir(parents=True, exist_ok=True)
    pr_curves()
    for cfg in ("auto-none", "shingle3-none-128", "word-tf"):
        verify_curves(cfg)
    for m in ("neardup", "neardup-unverified", "minhash-lsh"):
        planted_curves(m)
