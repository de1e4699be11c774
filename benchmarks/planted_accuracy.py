"""Planted near-copies: recall by length bucket and edit rate, precision on the mixed corpus.

English: copies of 20 Newsgroups posts mixed into 20 Newsgroups. Chinese: copies of People's
Daily articles and paragraphs mixed into both. 60 bases per length bucket x 8 edit kinds x
5 rates (1, 2, 5, 10, 20 %) = 7,200 copies per language.

    PYTHONPATH=src python benchmarks/planted_accuracy.py [--method neardup --method minhash-lsh]

Writes benchmarks/results/planted_<lang>.jsonl and prints recall tables.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.harness import METHODS
from neardup.eval.metrics import score
from neardup.eval.perturb import BUCKETS, EDIT_KINDS, PlantedSet, plant_copies

RATES = (0.01, 0.02, 0.05, 0.1, 0.2)


def planted(lang: str, per_bucket: int, seed: int) -> PlantedSet:
    if lang == "en":
        _, texts = load_corpus("20news")
    else:
        _, texts = load_corpus("peoples_daily")
        texts += load_corpus("peoples_daily_paragraphs")[1]
    return plant_copies(texts, per_bucket=per_bucket, kinds=EDIT_KINDS, rates=RATES, seed=seed)


@click.command()
@click.option("--lang", "langs", multiple=True, default=("en", "zh"))
@click.option(
    "--method",
    "methods",
    multiple=True,
    default=("neardup", "neardup-unverified", "minhash-lsh", "pypi-simhash"),
)
@click.option("--per-bucket", default=60, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(
    langs: tuple[str, ...], methods: tuple[str, ...], per_bucket: int, seed: int, out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        ps = planted(lang, per_bucket, seed)
        gt = GroundTruth.from_texts(ps.texts)
        buckets = np.array(ps.bucket)
        kinds = np.array(ps.kind)
        with (out / f"planted_{lang}.jsonl").open("w") as f:
            for name in methods:
                t0 = time.perf_counter()
                labels = METHODS[name][0](ps.texts)
                secs = time.perf_counter() - t0
                s = score(labels, gt)
                found = labels[ps.orig] == labels[ps.copy]
                f.write(
                    json.dumps(
                        {
                            "lang": lang,
                            "method": name,
                            "kind": "natural+planted",
                            "seconds": round(secs, 1),
                            "docs": len(ps.texts),
                            **s.as_dict(),
                        }
                    )
                    + "\n"
                )
                click.echo(
                    f"{lang} {name:20s} {secs:6.1f}s docs={len(ps.texts)} "
                    f"P={s.precision:.4f} R(must)={s.recall:.4f} F1={s.f1:.4f}"
                )
                for bucket in BUCKETS:
                    cells = []
                    for rate in RATES:
                        sel = (buckets == bucket) & (ps.rate == rate)
                        for kind in (*EDIT_KINDS, "all"):
                            ks = sel if kind == "all" else sel & (kinds == kind)
                            rec = float(found[ks].mean()) if ks.any() else float("nan")
                            f.write(
                                json.dumps(
                                    {
                                        "lang": lang,
                                        "method": name,
                                        "bucket": bucket,
                                        "rate": rate,
                                        "kind": kind,
                                        "recall": rec,
                                        "n": int(ks.sum()),
                                    }
                                )
                                + "\n"
                            )
                        cells.append(f"{rate:.0%}:{found[sel].mean():.3f}")
                    click.echo(f"   {bucket:6s} " + " ".join(cells))


if __name__ == "__main__":
    main()
