"""Choose the defaults jointly: natural corpora F1 and planted-copy recall, length-aware thresholds.

For one fingerprint config, candidates within candidate_k are verified with threshold
``t_short`` when the shorter document of the pair has < 300 characters, else ``t_long``.
Writes benchmarks/results/defaults_<config>.jsonl and prints the best settings.

    PYTHONPATH=src python benchmarks/sweep_defaults.py --config auto-none
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import click
import numpy as np

from neardup.dedup.clusters import connected_components
from neardup.eval.corpora import load_corpus
from neardup.eval.groundtruth import GroundTruth
from neardup.eval.methods import neardup_fingerprints, simhash_candidates
from neardup.eval.metrics import score
from neardup.verify import MinHashVerifier

sys.path.insert(0, str(Path(__file__).parent))
from planted_accuracy import planted

CONFIGS = {
    "word-none": ({"analyzer": "word", "weighting": "none"}, (6, 8, 10, 12, 14)),
    "word-none-128": ({"analyzer": "word", "weighting": "none", "bits": 128}, (12, 16, 20, 24, 28)),
    "auto13-none": (
        {"analyzer": "auto", "ngram_size": 1, "cjk_ngram_size": 3, "weighting": "none"},
        (6, 8, 10, 12, 14),
    ),
    "auto-none": ({"analyzer": "auto", "weighting": "none"}, (8, 10, 12, 14, 16)),
    "auto-none-128": (
        {"analyzer": "auto", "weighting": "none", "bits": 128},
        (16, 20, 24, 28, 32),
    ),
}
VERIFIERS = {
    "mh64x8n5": MinHashVerifier(num_hashes=64, bits=8, ngram=5),
    "mh128x8n5": MinHashVerifier(num_hashes=128, bits=8, ngram=5),
    "mh64x8n3": MinHashVerifier(num_hashes=64, bits=8, ngram=3),
    "mh64x8n4": MinHashVerifier(num_hashes=64, bits=8, ngram=4),
    "mh128x8n4": MinHashVerifier(num_hashes=128, bits=8, ngram=4),
}
T_SHORT = (0.6, 0.7, 0.8)
T_LONG = (0.4, 0.5, 0.6, 0.7)


def datasets() -> dict[str, tuple[list[str], np.ndarray | None]]:
    out: dict[str, tuple[list[str], np.ndarray | None]] = {}
    for name in ("reuters", "shopping"):
        out[name] = (load_corpus(name)[1], None)
    for lang in ("en", "zh"):
        ps = planted(lang, 60, 0)
        target = np.isin(np.array(ps.bucket), ["medium", "long"]) & (ps.rate <= 0.05)
        out[f"planted-{lang}"] = (ps.texts, np.stack([ps.orig, ps.copy, target], axis=1))
    return out


@click.command()
@click.option("--config", "config", default="auto-none")
@click.option("--candidate-k", "cks_opt", multiple=True, type=int)
@click.option("--t-short", "t_short", multiple=True, type=float, default=T_SHORT)
@click.option("--t-long", "t_long", multiple=True, type=float, default=T_LONG)
@click.option(
    "--verifier", "verifiers", multiple=True, default=("mh64x8n5", "mh128x8n5", "mh64x8n3")
)
@click.option("--tag", default="")
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(
    config: str,
    cks_opt: tuple[int, ...],
    t_short: tuple[float, ...],
    t_long: tuple[float, ...],
    verifiers: tuple[str, ...],
    tag: str,
    out: Path,
) -> None:
    opts, cks = CONFIGS[config]
    cks = cks_opt or cks
    results: dict[tuple, dict[str, float]] = {}  # type: ignore[type-arg]
    with (out / f"defaults_{config}{tag}.jsonl").open("w") as f:
        for dname, (texts, plant) in datasets().items():
            gt = GroundTruth.from_texts(texts) if plant is None else None
            fps, empty = neardup_fingerprints(texts, **opts)
            cand = simhash_candidates(fps, empty, max(cks))
            lengths = np.array([len(t) for t in texts])
            short = np.minimum(lengths[cand.i], lengths[cand.j]) < 300
            for vname, v in ((n, VERIFIERS[n]) for n in verifiers):
                sk = v.sketch_many(texts)
                sim = v.estimate(sk[cand.i], sk[cand.j])
                for ck, ts, tl in itertools.product(cks, t_short, t_long):
                    keep = (cand.dist <= ck) & (sim >= np.where(short, ts, tl))
                    labels = connected_components(len(texts), cand.i[keep], cand.j[keep])
                    row = {
                        "data": dname,
                        "config": config,
                        "verifier": vname,
                        "candidate_k": ck,
                        "t_short": ts,
                        "t_long": tl,
                    }
                    if gt is not None:
                        row.update(score(labels, gt).as_dict())
                        metric = row["f1"]
                    else:
                        assert plant is not None
                        found = labels[plant[:, 0]] == labels[plant[:, 1]]
                        row["recall_target"] = float(found[plant[:, 2] == 1].mean())
                        row["recall_all"] = float(found.mean())
                        metric = row["recall_target"]
                    f.write(json.dumps(row) + "\n")
                    results.setdefault((vname, ck, ts, tl), {})[dname] = metric
            click.echo(f"done {dname}")
    ok = [
        (min(m["reuters"], m["shopping"]), key, m)
        for key, m in results.items()
        if min(m["planted-en"], m["planted-zh"]) >= 0.99
    ]
    for score_, key, m in sorted(ok, reverse=True)[:15]:
        click.echo(f"{score_:.4f} {key} " + " ".join(f"{k}={v:.4f}" for k, v in m.items()))
    click.echo("best ignoring the planted target:")
    best = sorted(
        ((min(m["reuters"], m["shopping"]), k, m) for k, m in results.items()), reverse=True
    )
    for score_, key, m in best[:8]:
        click.echo(f"{score_:.4f} {key} " + " ".join(f"{k}={v:.4f}" for k, v in m.items()))


if __name__ == "__main__":
    main()
