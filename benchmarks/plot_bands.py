"""The candidate S-curve: probability that a pair becomes a candidate vs its Jaccard similarity.

Model: ``1 - (1 - s**rows)**bands`` with ``s = J + (1 - J) / 256`` (8-bit MinHash values) for
the default 32 x 4 bands (and 42 x 3, 16 x 8 for comparison). Measured: every planted pair of
``benchmarks/planted_accuracy.py`` (en and zh, 60 bases per bucket, seed 0, all edit kinds and
rates), binned by the exact Jaccard of the verifier's shingle sets; for each bin the share of
pairs sharing a band key (default design) and the share within Hamming 14 of the default
fingerprints (the design before issue 13).

    PYTHONPATH=src nice -n 10 python benchmarks/plot_bands.py

Writes docs/img/band_scurve.png and benchmarks/results/scale/band_scurve.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import numpy as np

from neardup.eval.harness import DEFAULT_FINGERPRINTER, DEFAULT_VERIFIER
from neardup.fingerprint import Fingerprinter
from neardup.index.lsh import BandDesign, band_keys
from neardup.verify import shingle_hashes_many
from planted_accuracy import planted  # benchmarks/ is the script's folder

BINS = np.round(np.arange(0.0, 1.0001, 0.05), 2)


def _pairs(lang: str) -> dict[str, np.ndarray]:
    """Exact shingle Jaccard, shared band key and Hamming distance of every planted pair."""
    ps = planted(lang, 60, 0)
    v = DEFAULT_VERIFIER
    used = np.unique(np.concatenate([ps.orig, ps.copy]))
    texts = [ps.texts[i] for i in used.tolist()]
    row = {int(d): r for r, d in enumerate(used.tolist())}
    flat, off = shingle_hashes_many(texts, v.ngram, mode=v.mode, seed=v.seed)
    fps = np.asarray(Fingerprinter(**DEFAULT_FINGERPRINTER).fingerprint_many(texts), np.uint64)
    keys = band_keys(np.asarray(v.sketch_many(texts)), BandDesign())
    a = np.array([row[int(i)] for i in ps.orig])
    b = np.array([row[int(i)] for i in ps.copy])
    jac = np.empty(a.size)
    for p, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        sx, sy = flat[off[x] : off[x + 1]], flat[off[y] : off[y + 1]]
        inter = np.intersect1d(sx, sy, assume_unique=True).size
        union = sx.size + sy.size - inter
        jac[p] = inter / union if union else 1.0
    shared = (keys[a] == keys[b]).any(axis=1)
    dist = np.bitwise_count(fps[a] ^ fps[b])
    return {"jaccard": jac, "band": shared, "hamming": dist}


@click.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results/scale"))
@click.option("--img", type=click.Path(path_type=Path), default=Path("docs/img/band_scurve.png"))
def main(out: Path, img: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    js = np.linspace(0, 1, 201)
    for bands, rows, style in ((32, 4, "-"), (42, 3, ":"), (16, 8, "--")):
        s = js + (1 - js) / 256.0  # per-value match probability of 8-bit MinHash values
        label = f"model {bands} x {rows}" + (" (default)" if (bands, rows) == (32, 4) else "")
        ax.plot(js, 1 - (1 - s**rows) ** bands, style, color="black", lw=1.2, label=label)
    result: dict[str, Any] = {}
    for lang, color in (("en", "tab:blue"), ("zh", "tab:red")):
        p = _pairs(lang)
        idx = np.clip(np.digitize(p["jaccard"], BINS) - 1, 0, BINS.size - 2)
        rows_out = []
        for i in range(BINS.size - 1):
            sel = idx == i
            if sel.sum() < 20:
                continue
            rows_out.append(
                {
                    "jaccard_lo": float(BINS[i]),
                    "pairs": int(sel.sum()),
                    "band_candidate": round(float(p["band"][sel].mean()), 4),
                    "hamming14_candidate": round(float((p["hamming"][sel] <= 14).mean()), 4),
                }
            )
        result[lang] = rows_out
        mid = [r["jaccard_lo"] + 0.025 for r in rows_out]
        ax.plot(
            mid,
            [r["band_candidate"] for r in rows_out],
            "o",
            color=color,
            ms=5,
            label=f"measured bands, planted {lang}",
        )
        ax.plot(
            mid,
            [r["hamming14_candidate"] for r in rows_out],
            "x",
            color=color,
            ms=6,
            label=f"measured Hamming <= 14, planted {lang}",
        )
        for r in rows_out:
            click.echo(
                f"{lang} J>={r['jaccard_lo']:.2f} n={r['pairs']:5d} "
                f"bands={r['band_candidate']:.4f} hamming14={r['hamming14_candidate']:.4f}"
            )
    ax.axvline(DEFAULT_VERIFIER.threshold, color="grey", lw=0.8, ls="-.")
    ax.set_xlabel("Jaccard similarity of the verifier's shingle sets")
    ax.set_ylabel("P(candidate)")
    ax.set_title("Candidate probability vs similarity (verifier threshold dashed)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(img, dpi=110)
    (out / "band_scurve.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
