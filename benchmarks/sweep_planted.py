"""Verifier choice on planted copies: recall of <=5 % edits in docs >= 300 chars vs precision.

One fingerprint pass per config; candidates at each candidate_k scored with each verifier and
threshold. Writes benchmarks/results/planted_sweep_<lang>.jsonl.

    PYTHONPATH=src python benchmarks/sweep_planted.py
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from neardup.eval.groundtruth import GroundTruth
from neardup.eval.methods import neardup_fingerprints, simhash_candidates
from neardup.eval.metrics import score
from neardup.verify import MinHashVerifier
from planted_accuracy import planted  # type: ignore[import-not-found]

CONFIGS = {
    "auto-none-128": {"analyzer": "auto", "weighting": "none", "bits": 128},
    "shingle3-none-128": {"analyzer": "shingle", "ngram_size": 3, "weighting": "none", "bits": 128},
}
VERIFIERS = {
    "mh64x8n5": MinHashVerifier(num_hashes=64, bits=8, ngram=5),
    "mh64x8n3": MinHashVerifier(num_hashes=64, bits=8, ngram=3),
    "mh128x8n3": MinHashVerifier(num_hashes=128, bits=8, ngram=3),
}


@click.command()
@click.option("--lang", "langs", multiple=True, default=("en", "zh"))
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def main(langs: tuple[str, ...], out: Path) -> None:
    for lang in langs:
        ps = planted(lang, 60, 0)
        gt = GroundTruth.from_texts(ps.texts)
        long_ = np.isin(np.array(ps.bucket), ["medium", "long"])
        target = long_ & (ps.rate <= 0.05)
        sk = {name: v.sketch_many(ps.texts) for name, v in VERIFIERS.items()}
        with (out / f"planted_sweep_{lang}.jsonl").open("w") as f:
            for cname, opts in CONFIGS.items():
                fps, empty = neardup_fingerprints(ps.texts, **opts)
                cand = simhash_candidates(fps, empty, 32)
                for vname, v in VERIFIERS.items():
                    cand.sim = v.estimate(sk[vname][cand.i], sk[vname][cand.j])
                    for ck in (12, 16, 20, 24, 28, 32):
                        for th in (0.4, 0.5, 0.6, 0.7):
                            labels = cand.labels(ck, th)
                            found = labels[ps.orig] == labels[ps.copy]
                            s = score(labels, gt)
                            row = {
                                "lang": lang,
                                "config": cname,
                                "verifier": vname,
                                "candidate_k": ck,
                                "threshold": th,
                                "recall_target": float(found[target].mean()),
                                "recall_all": float(found.mean()),
                                **s.as_dict(),
                            }
                            f.write(json.dumps(row) + "\n")
                            click.echo(
                                f"{lang} {cname} {vname} ck={ck} t={th} "
                                f"R5%={row['recall_target']:.4f} P={s.precision:.4f} "
                                f"R={s.recall:.4f}"
                            )


if __name__ == "__main__":
    main()
