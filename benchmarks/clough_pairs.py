"""Labelled-pairs check on the Clough & Stevenson plagiarism corpus (human labels, not Jaccard).

Pairs (answer, its source): label 1 for ``cut`` and ``light`` (near copies), 0 for ``heavy``
(rewritten) and ``non`` (independent). Runs the ``neardup eval --pairs`` report.

    PYTHONPATH=src python benchmarks/clough_pairs.py
"""

from __future__ import annotations

import gzip
import json

import numpy as np

from neardup.eval.cli import labelled_pairs_report
from neardup.eval.corpora import corpora_dir


def main() -> None:
    with gzip.open(corpora_dir() / "clough_stevenson/docs.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    source = {d["task"]: d["text"] for d in docs if d["category"] == "orig"}
    answers = [d for d in docs if d["category"] != "orig"]
    a = [d["text"] for d in answers]
    b = [source[d["task"]] for d in answers]
    truth = np.array([d["category"] in ("cut", "light") for d in answers])
    report = labelled_pairs_report(a, b, truth)
    print(json.dumps(report, indent=1))
    from neardup.eval.harness import DEFAULT_VERIFIER

    est = DEFAULT_VERIFIER.estimate(
        DEFAULT_VERIFIER.sketch_many(a), DEFAULT_VERIFIER.sketch_many(b)
    )
    for cat in ("cut", "light", "heavy", "non"):
        sel = np.array([d["category"] == cat for d in answers])
        print(
            f"{cat:6s} n={sel.sum():2d} estimated 4-shingle Jaccard: "
            f"min {est[sel].min():.2f} median {np.median(est[sel]):.2f} max {est[sel].max():.2f}"
        )


if __name__ == "__main__":
    main()
