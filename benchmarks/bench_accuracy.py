"""Main accuracy table: recommended defaults vs baselines on natural near-duplicates.

    PYTHONPATH=src python benchmarks/bench_accuracy.py            # ~3 min on 2 shared cores

Corpora: Reuters-21578 (19,043 non-empty docs) and the first 30,000 non-empty
zh_online_shopping_10cats reviews. Ground truth: exact 5-shingle Jaccard (>= 0.8 must merge,
>= 0.5 may merge). Writes benchmarks/results/main_table.json and prints a markdown table.

The ``neardup*`` rows (except ``neardup-components*``) are the product's decisions: a
``Deduplicator`` at that configuration, its ``cluster_id`` per text (what the library and the CLI
return). ``neardup-components*`` and the anchors (``pypi-simhash``, ``classic``, ``text-dedup``,
``minhash-lsh``) are connected components of the pairs they accept: method sweeps, no product
runs them. Target (README): no regression, Reuters ``neardup`` F1 0.996.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import click

from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.harness import METHODS, run_method


@click.command()
@click.option("--corpus", "corpora", multiple=True, default=("reuters", "shopping"))
@click.option("--method", "methods", multiple=True, default=tuple(METHODS))
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(corpora: tuple[str, ...], methods: tuple[str, ...], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    click.echo("| corpus | method | precision | recall | F1 | ARI | seconds | notes |")
    click.echo("|---|---|---|---|---|---|---|---|")
    for corpus in corpora:
        _, texts = load_corpus(corpus)
        gt = GroundTruth.from_texts(texts)
        for name in methods:
            r = run_method(name, texts, gt)
            s = r.scores
            rows.append(
                {
                    "corpus": corpus,
                    "docs": len(texts),
                    "method": name,
                    "seconds": round(r.seconds, 2),
                    "note": r.note,
                    **s.as_dict(),
                }
            )
            click.echo(
                f"| {corpus} | {name} | {s.precision:.4f} | {s.recall:.4f} | {s.f1:.4f} "
                f"| {s.ari:.4f} | {r.seconds:.1f} | {r.note} |"
            )
    meta = {"python": platform.python_version(), "machine": platform.machine()}
    (out / "main_table.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
