"""Edited copies (issue 20): recall per language, length and edit rate, clustered-pair precision.

Three planted sets, each = real background documents + ``--bases`` sampled originals with one
edited copy each, at 2, 5 or 10 % edits (a third of the originals each), in shuffled order:

- ``en``: Reuters-21578 news, originals >= 400 characters (background: other Reuters stories);
- ``zh-short``: People's Daily paragraphs of 50-300 characters (background: other such
  paragraphs plus online-shopping reviews of 50-300 characters);
- ``zh-long``: People's Daily articles >= 500 characters (background: other articles).

An edit at rate r: r x (number of units) insertions, deletions or substitutions (one kind per
copy, drawn at random; units are words for English, characters for Chinese), then re-flowed
lines and some full-width characters (these two leave the NFKC shingles unchanged).
A ``remix`` set checks precision alone: documents assembled from 2-4 paragraphs of a shared
pool (English: 20 Newsgroups paragraphs; Chinese: People's Daily paragraphs).

Recall: the copy lands in its original's cluster. Clustered-pair precision: every pair of
documents in one cluster (clusters above 60 members: 60 sampled) is right when both come from
the same original or the Jaccard of their word 5-shingles / character 5-grams (NFKC, letters and
digits only, :func:`neardup.verify.shingle_hashes` with n=5) is >= 0.5. The anchor, side by
side on the same input: datasketch MinHashLSH(threshold=0.5, num_perm=128) on the same
5-shingles, clusters = connected components.

    flock /tmp/neardup-bench.lock .venv/bin/python benchmarks/bench_edited.py --seed 0
    ... --seed 1  (held out)   ... --sweep 0.3,0.4,0.5,0.6,0.7 --plot docs/img/edited_threshold.png

Writes one JSON line per (set, method, threshold) to ``--out`` and prints tables.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np
import numpy.typing as npt

from neardup.eval.corpora import load_corpus
from neardup.eval.perturb import perturb
from neardup.verify import MinHashVerifier, shingle_hashes

RATES = (0.02, 0.05, 0.10)
IntArr = npt.NDArray[np.int64]


def _pick(texts: list[str], lo: int, hi: float) -> list[str]:
    seen: set[str] = set()
    out = []
    for t in texts:
        if lo <= len(t) < hi and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _edit(text: str, rate: float, rng: np.random.Generator) -> str:
    kind = ("insert", "delete", "substitute")[int(rng.integers(3))]
    out = perturb(text, kind, rate, seed=rng)
    out = perturb(out, "rewrap", 0.05, seed=rng)
    return perturb(out, "width", 0.2, seed=rng) if rng.random() < 0.5 else out


def planted(
    name: str, bases: int, background: int, seed: int, copies: int = 1
) -> tuple[list[str], IntArr, IntArr, IntArr, npt.NDArray[np.float64]]:
    """``(texts, group, orig, copy, rate)``: group = the original's index (own index otherwise).

    ``copies`` > 1: that many independent edits of each original at its rate, each placed after
    its original (a wire story reposted by several sites, each with its own edits)."""
    rng = np.random.default_rng([seed, ("en", "zh-short", "zh-long").index(name)])
    if name == "en":
        pool = _pick(load_corpus("reuters")[1], 400, float("inf"))
        extra: list[str] = []
    elif name == "zh-short":
        pool = _pick(load_corpus("peoples_daily_paragraphs")[1], 50, 300)
        extra = _pick(load_corpus("shopping")[1], 50, 300)
    else:
        pool = _pick(load_corpus("peoples_daily")[1], 500, float("inf"))
        extra = []
    order = rng.permutation(len(pool))
    base_texts = [pool[i] for i in order[:bases]]
    bg = [pool[i] for i in order[bases : bases + background]]
    if extra:
        bg += [extra[i] for i in rng.permutation(len(extra))[: background // 3]]
    texts = base_texts + bg
    group = list(range(len(texts)))
    orig, copy, rates = [], [], []
    for b, t in enumerate(base_texts):
        # one copy per original by default (several copies of one original in shuffled order
        # would let a 10 % copy become the kept representative that a 2 % copy must then
        # match: a chain, not an edit rate)
        for _ in range(copies):
            orig.append(b)
            copy.append(len(texts))
            rates.append(RATES[b % len(RATES)])
            group.append(b)
            texts.append(_edit(t, rates[-1], rng))
    # shuffle so originals do not always come first (the greedy rule keeps the first)
    perm = rng.permutation(len(texts))
    if copies > 1:  # each original before its copies
        at = np.empty_like(perm)
        at[perm] = np.arange(len(perm))
        for o, c in zip(orig, copy, strict=True):
            if at[c] < at[o]:
                perm[at[c]], perm[at[o]] = o, c
                at[o], at[c] = at[c], at[o]
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    texts = [texts[i] for i in perm]
    g = inv[np.asarray(group)][perm]
    return texts, g, inv[np.asarray(orig)], inv[np.asarray(copy)], np.asarray(rates)


def remix(lang: str, docs: int, seed: int) -> tuple[list[str], IntArr]:
    """Documents of 2-4 paragraphs from a pool of ``docs // 4`` paragraphs; group = own index.

    A small pool makes overlaps common: about 2 % of the pairs share a paragraph and many
    share two or three (Jaccard 0.3-0.7 whatever the shingle size).
    """
    rng = np.random.default_rng([seed, 7, len(lang)])
    if lang == "en":
        paras = [p.strip() for t in load_corpus("20news")[1] for p in t.split("\n\n")]
        paras = _pick(paras, 150, 1000)
    else:
        paras = _pick(load_corpus("peoples_daily_paragraphs")[1], 80, 400)
    pool = [paras[i] for i in rng.permutation(len(paras))[: max(docs // 4, 4)]]
    sep = "\n\n" if lang == "en" else "\n"
    texts = [
        sep.join(pool[i] for i in rng.choice(len(pool), int(rng.integers(2, 5)), replace=False))
        for _ in range(docs)
    ]
    return texts, np.arange(docs, dtype=np.int64)


def pair_precision(
    labels: IntArr, group: IntArr, texts: Sequence[str], rng: np.random.Generator
) -> tuple[int, int, float]:
    """``(pairs, wrong, precision)`` over clustered pairs (large clusters sampled)."""
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    cache: dict[int, npt.NDArray[np.uint64]] = {}

    def sh(i: int) -> npt.NDArray[np.uint64]:
        if i not in cache:
            cache[i] = shingle_hashes(texts[i], 5)
        return cache[i]

    pairs = wrong = 0
    for members in np.split(order, cuts):
        if len(members) < 2:
            continue
        if len(members) > 60:
            members = rng.choice(members, 60, replace=False)
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                i, j = int(members[x]), int(members[y])
                pairs += 1
                if group[i] == group[j]:
                    continue
                a, b = sh(i), sh(j)
                inter = len(np.intersect1d(a, b, assume_unique=True))
                union = len(a) + len(b) - inter
                if union == 0 or inter / union < 0.5:
                    wrong += 1
    return pairs, wrong, 1.0 - wrong / pairs if pairs else 1.0


def neardup_labels(
    threshold: float | None, params: dict[str, Any], dedup: dict[str, Any] | None = None
) -> Callable[[Sequence[str]], IntArr]:
    from neardup.dedup import Deduplicator

    def run(texts: Sequence[str]) -> IntArr:
        kw = dict(params) if threshold is None else {**params, "threshold": threshold}
        v = MinHashVerifier(**kw)
        dd = Deduplicator(verifier=v, **(dedup or {}))
        if len(texts) <= 100_000:
            return np.asarray(dd.run(list(texts)).cluster_id, dtype=np.int64)
        # large sets stream in chunks (the same decisions as one batch, bounded memory)
        parts = [
            dd.feed(list(texts[a : a + 50_000])).cluster_id for a in range(0, len(texts), 50_000)
        ]
        return np.concatenate(parts).astype(np.int64)

    return run


def datasketch_labels(texts: Sequence[str]) -> IntArr:
    from neardup.eval.methods import minhash_lsh

    return minhash_lsh(texts, threshold=0.5, num_perm=128, ngram=5)


def _row(name: str, method: str, thr: Any, labels: IntArr, data: Any, secs: float) -> dict:
    texts, group, orig, copy, rates = data
    found = labels[orig] == labels[copy]
    pairs, wrong, prec = pair_precision(labels, group, texts, np.random.default_rng(0))
    rec = {f"{r:.0%}": round(float(found[rates == r].mean()), 4) for r in RATES if len(orig)}
    return {"set": name, "method": method, "threshold": thr, "docs": len(texts),
            "copies": len(orig), "recall": rec, "pairs": pairs, "wrong": wrong,
            "precision": round(prec, 4), "seconds": round(secs, 1)}  # fmt: skip


@click.command()
@click.option("--seed", default=0, show_default=True)
@click.option("--bases", default=600, show_default=True, help="originals per set")
@click.option("--background", default=3000, show_default=True)
@click.option("--copies", default=1, show_default=True, help="edited copies per original")
@click.option("--remix-docs", default=3000, show_default=True)
@click.option("--set", "sets", multiple=True, default=("en", "zh-short", "zh-long", "remix"))
@click.option("--sweep", default="", help="comma-separated verifier thresholds (default: none)")
@click.option("--verifier", "verifier_json", default="{}", help="MinHashVerifier kwargs (JSON)")
@click.option(
    "--dedup",
    "dedup_json",
    default="{}",
    help="Deduplicator kwargs (JSON), e.g. '{\"cluster_similarity\": null}' (star clusters)",
)
@click.option("--no-anchor", is_flag=True, help="skip datasketch")
@click.option("--plot", type=click.Path(path_type=Path), default=None)
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(
    seed: int, bases: int, background: int, copies: int, remix_docs: int, sets: tuple[str, ...],
    sweep: str, verifier_json: str, dedup_json: str, no_anchor: bool, plot: Path | None,
    out: Path,
) -> None:  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    params = json.loads(verifier_json)
    dedup = json.loads(dedup_json)
    thresholds: list[float | None] = [None] + [float(x) for x in sweep.split(",") if x]
    rows = []
    for name in sets:
        if name == "remix":
            data_sets = []
            for lang in ("en", "zh"):
                t, g = remix(lang, remix_docs, seed)
                empty = np.empty(0, np.int64)
                data_sets.append((f"remix-{lang}", (t, g, empty, empty, np.empty(0))))
        else:
            data_sets = [(name, planted(name, bases, background, seed, copies))]
        for label, data in data_sets:
            methods: list[tuple[str, Any, Callable[[Sequence[str]], IntArr]]] = [
                ("neardup", thr, neardup_labels(thr, params, dedup)) for thr in thresholds
            ]
            if not no_anchor:
                methods.append(("datasketch", 0.5, datasketch_labels))
            for method, thr, fn in methods:
                t0 = time.perf_counter()
                labels = fn(data[0])
                row = _row(label, method, thr, labels, data, time.perf_counter() - t0)
                row["seed"] = seed
                row["verifier"] = params if method == "neardup" else None
                row["dedup"] = dedup if method == "neardup" else None
                rows.append(row)
                click.echo(json.dumps(row))
    with (out / f"edited_seed{seed}.jsonl").open("w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    if plot is not None:
        _plot(rows, plot)


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name in sorted({r["set"] for r in rows if not r["set"].startswith("remix")}):
        sw = sorted(
            (r for r in rows if r["set"] == name and r["method"] == "neardup" and r["threshold"]),
            key=lambda r: r["threshold"],
        )
        x = [r["threshold"] for r in sw]
        for rate, style in (("5%", "-"), ("10%", "--")):
            axes[0].plot(x, [r["recall"][rate] for r in sw], style, label=f"{name} {rate}")
        axes[1].plot(x, [r["precision"] for r in sw], label=name)
    for name in sorted({r["set"] for r in rows if r["set"].startswith("remix")}):
        sw = sorted(
            (r for r in rows if r["set"] == name and r["method"] == "neardup" and r["threshold"]),
            key=lambda r: r["threshold"],
        )
        axes[1].plot([r["threshold"] for r in sw], [r["precision"] for r in sw], ":", label=name)
    axes[0].set(xlabel="threshold (verifier similarity)", ylabel="recall of edited copies")
    axes[1].set(xlabel="threshold (verifier similarity)", ylabel="clustered-pair precision")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
