"""Candidate designs compared: SimHash radius (today) vs MinHash LSH bands (the scaling default).

For each corpus (Reuters, 30,000 Chinese reviews, planted copies en / zh) the script computes
the default fingerprints and verifier sketches once, then for each candidate design the
candidate pairs, and scores connected components of the accepted pairs
(candidate AND Hamming <= k AND verifier >= threshold) for several k (64 = no Hamming filter).

    PYTHONPATH=src nice -n 10 python benchmarks/sweep_bands.py

Writes benchmarks/results/sweep_bands.jsonl and prints one line per (corpus, design, k).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from neardup.dedup.clusters import connected_components
from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.harness import DEFAULT_FINGERPRINTER, DEFAULT_VERIFIER
from neardup.eval.metrics import score
from neardup.fingerprint import Fingerprinter
from neardup.index import all_pairs
from neardup.index.lsh import BandDesign, band_keys, pairs_sharing_keys

RATES = (0.01, 0.02, 0.05, 0.1, 0.2)
KS = (14, 18, 22, 26, 64)


def _corpora(which: tuple[str, ...]) -> dict[str, tuple[list[str], object]]:
    out: dict[str, tuple[list[str], object]] = {}
    if "reuters" in which:
        texts = [t for t in load_corpus("reuters")[1] if t.strip()]
        out["reuters"] = (texts, None)
    if "reviews" in which:
        texts = [t for t in load_corpus("shopping")[1] if t.strip()][:30000]
        out["reviews"] = (texts, None)
    for lang in ("en", "zh"):
        if f"planted-{lang}" in which:
            import importlib.util
            import sys

            spec = importlib.util.spec_from_file_location(
                "planted_accuracy", Path(__file__).with_name("planted_accuracy.py")
            )
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules["planted_accuracy"] = mod
            spec.loader.exec_module(mod)
            ps = mod.planted(lang, 60, 0)
            out[f"planted-{lang}"] = (ps.texts, ps)
    return out


def _candidates(design: str, fps: np.ndarray, sk: np.ndarray, live: np.ndarray) -> tuple:
    if design.startswith("hamming"):
        r = int(design[len("hamming") :])
        i, j, _ = all_pairs(fps[live], r)
        return live[np.asarray(i)], live[np.asarray(j)]
    b, r = (int(x) for x in design.split("x"))
    keys = band_keys(sk[live], BandDesign(bands=b, rows=r))
    docs = np.repeat(np.arange(live.size), keys.shape[1])
    a, c = pairs_sharing_keys(keys.ravel(), docs)
    return live[a], live[c]


@click.command()
@click.option(
    "--corpus", "which", multiple=True, default=("reuters", "reviews", "planted-en", "planted-zh")
)
@click.option("--design", "designs", multiple=True, default=("hamming14", "32x4", "42x3"))
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(which: tuple[str, ...], designs: tuple[str, ...], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    fper = Fingerprinter(**DEFAULT_FINGERPRINTER)
    v = DEFAULT_VERIFIER
    with (out / "sweep_bands.jsonl").open("a") as f:
        for name, (texts, ps) in _corpora(which).items():
            gt = GroundTruth.from_texts(texts)
            fps, empty = fper.fingerprint_many(texts, return_mask=True)
            fps = np.asarray(fps, np.uint64)
            live = np.flatnonzero(~np.asarray(empty, bool))
            sk = np.asarray(v.sketch_many(texts))
            for design in designs:
                t0 = time.perf_counter()
                i, j = _candidates(design, fps, sk, live)
                secs = time.perf_counter() - t0
                d = np.bitwise_count(fps[i] ^ fps[j]).astype(np.int64)
                sim = v.similarity(sk[i], sk[j])
                ok = sim >= v.threshold
                for k in KS:
                    acc = ok & (d <= k)
                    labels = connected_components(len(texts), i[acc], j[acc])
                    s = score(labels, gt)
                    row = {
                        "corpus": name,
                        "design": design,
                        "k": k,
                        "pairs": int(i.size),
                        "accepted": int(acc.sum()),
                        "seconds": round(secs, 2),
                        **s.as_dict(),
                    }
                    if ps is not None:
                        found = labels[ps.orig] == labels[ps.copy]
                        long = np.array([b != "short" for b in ps.bucket])
                        for rate in RATES:
                            sel = long & (ps.rate == rate)
                            row[f"recall_{rate:g}"] = round(float(found[sel].mean()), 4)
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    extra = (
                        " ".join(f"{r:g}:{row.get(f'recall_{r:g}', '')}" for r in RATES)
                        if ps
                        else ""
                    )
                    click.echo(
                        f"{name:11s} {design:9s} k={k:2d} pairs={i.size:8d} "
                        f"acc={int(acc.sum()):7d} "
                        f"P={s.precision:.4f} R={s.recall:.4f} F1={s.f1:.4f} {extra}"
                    )


if __name__ == "__main__":
    main()
