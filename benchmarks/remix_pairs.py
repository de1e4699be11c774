"""Which clustered pairs of a remix set are wrong: direct ones (a document and the kept
document it was compared with) or member-member ones (two duplicates of one kept document,
never compared with each other)? Issue 20's remix case.

    NEARDUP_CORPORA=../shared/corpora python benchmarks/remix_pairs.py --lang en --docs 50000
    ... --dedup '{"cluster_similarity": null}' --verifier '{"num_hashes": 128}'   # stops 29-31

Prints pairs and wrong pairs (word-5-shingle / character-5-gram Jaccard < 0.5) of each kind,
and for wrong direct pairs the quantiles of their exact J5, exact J4 and decided similarity.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_edited import remix
from neardup.dedup import Deduplicator
from neardup.verify import MinHashVerifier, shingle_hashes


@click.command()
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True)
@click.option("--docs", default=50_000, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--verifier", "verifier_json", default="{}", help="MinHashVerifier kwargs (JSON)")
@click.option("--dedup", "dedup_json", default="{}", help="Deduplicator kwargs (JSON)")
def main(lang: str, docs: int, seed: int, verifier_json: str, dedup_json: str) -> None:
    texts, _ = remix(lang, docs, seed)
    v = MinHashVerifier(**json.loads(verifier_json))
    d = Deduplicator(verifier=v, **json.loads(dedup_json)).run(texts)
    rep = np.where(d.duplicate_of >= 0, d.duplicate_of, np.arange(len(texts)))
    sets: dict[tuple[int, int], set[int]] = {}

    def jac(a: int, b: int, n: int = 5) -> float:
        for i in (a, b):
            if (i, n) not in sets:
                sets[i, n] = set(shingle_hashes(texts[i], n).tolist())
        x, y = sets[a, n], sets[b, n]
        return len(x & y) / len(x | y)

    counts = {"direct": [0, 0], "member-member": [0, 0]}
    wrong_direct = []
    order = np.argsort(d.cluster_id, kind="stable")
    for members in np.split(order, np.flatnonzero(np.diff(d.cluster_id[order])) + 1):
        for x, a in enumerate(members.tolist()):
            for b in members.tolist()[x + 1 :]:
                kind = "direct" if rep[a] == b or rep[b] == a else "member-member"
                wrong = jac(a, b) < 0.5
                counts[kind][0] += 1
                counts[kind][1] += wrong
                if wrong and kind == "direct":
                    wrong_direct.append((jac(a, b), jac(a, b, 4), float(d.similarity[max(a, b)])))
    total = sum(c[0] for c in counts.values())
    wrong = sum(c[1] for c in counts.values())
    click.echo(
        f"{lang} {docs} docs: pairs {total}, wrong {wrong}, precision "
        f"{1 - wrong / max(total, 1):.4f}; "
        + "; ".join(f"{k}: {c[0]} pairs, {c[1]} wrong" for k, c in counts.items())
    )
    if wrong_direct:
        q = np.quantile(np.array(wrong_direct), [0, 0.5, 1], axis=0).round(3).tolist()
        click.echo(f"wrong direct pairs, min / median / max of (J5, J4, decided similarity): {q}")


if __name__ == "__main__":
    main()
