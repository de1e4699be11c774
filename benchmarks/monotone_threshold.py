"""Issue 38, measured: a lower ``--threshold`` never finds less of the closest copies.

Each set = ``--bases`` originals, each followed (in a shuffled order of everything) by a
10 %-edited copy and then a 5 %-edited copy, + ``--background`` documents of the same kind:
**en** Reuters stories >= 400 characters, **zh** People's Daily articles >= 500 characters
(edits as ``bench_edited.py``: insertions, deletions or substitutions of words / Chinese
characters, re-flowed lines, full-width characters). The 10 % copy arrives first, joins the
original's cluster and lowers its floor: the case where the ``cluster_similarity`` rule of
version 1 kept the 5 % copy. Per threshold (the default configuration otherwise): the
duplicates written, the 5 % and 10 % copies found (in their original's cluster), and the
planted pairs found at some higher threshold but not at this one (``lost``).

    NEARDUP_CORPORA=/work/shared/corpora python benchmarks/monotone_threshold.py --seed 0
    PYTHONPATH=<older checkout>/src python benchmarks/monotone_threshold.py   # another version
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import neardup
from bench_edited import _edit, _pick
from neardup.dedup import Deduplicator
from neardup.eval.corpora import load_corpus


def planted(
    lang: str, bases: int, background: int, seed: int
) -> tuple[list[str], list[int], list[float]]:
    """``(texts, orig, rate)``: ``orig[i]`` = the position of ``i``'s original (``i`` itself for
    an original or background document), ``rate[i]`` its edit rate (0 for those); each original
    before its 10 % copy, that before its 5 % copy."""
    rng = np.random.default_rng([seed, len(lang)])
    if lang == "en":
        pool = _pick(load_corpus("reuters")[1], 400, float("inf"))
    else:
        pool = _pick(load_corpus("peoples_daily")[1], 500, float("inf"))
    chosen = [pool[i] for i in rng.permutation(len(pool))[: bases + background]]
    # units: (original index, edit rate or 0); the units' order is shuffled, then each
    # original's copies are moved after it in the order 10 %, 5 %
    units = [(b, 0.0) for b in range(len(chosen))]
    units += [(b, r) for b in range(bases) for r in (0.10, 0.05)]
    order = rng.permutation(len(units)).tolist()
    slots = {b: sorted(i for i, u in enumerate(order) if units[u][0] == b) for b in range(bases)}
    for b, where in slots.items():
        for at, rate in zip(where, (0.0, 0.10, 0.05), strict=True):
            order[at] = units.index((b, rate))
    texts, orig, rates, first = [], [], [], {}
    for u in order:
        b, rate = units[u]
        first.setdefault(b, len(texts))
        orig.append(first[b])
        rates.append(rate)
        texts.append(chosen[b] if rate == 0 else _edit(chosen[b], rate, rng))
    return texts, orig, rates


@click.command()
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--bases", type=int, default=100, show_default=True)
@click.option("--background", type=int, default=600, show_default=True)
@click.option("--thresholds", default="0.6,0.5,0.4,0.3", show_default=True)
def main(seed: int, bases: int, background: int, thresholds: str) -> None:
    """Print one table row per (set, threshold)."""
    print(f"neardup from {Path(neardup.__file__).parent}, seed {seed}")
    print("| set | threshold | duplicates | 5 % copies found | 10 % copies found | lost |")
    print("|---|---|---|---|---|---|")
    for lang in ("en", "zh"):
        texts, orig, rates = planted(lang, bases, background, seed)
        copies = [i for i, o in enumerate(orig) if o != i]
        five = {i for i in copies if rates[i] == 0.05}
        found_before: set[int] = set()
        for t in (float(x) for x in thresholds.split(",")):
            d = Deduplicator(threshold=t).run(texts)
            cluster = d.cluster_id
            found = {i for i in copies if cluster[i] == cluster[orig[i]]}
            dups = sum(s in ("duplicate", "exact_duplicate") for s in d.statuses)
            n5 = len(found & five)
            n10 = len(found) - n5
            lost = len(found_before - found)
            found_before |= found
            print(f"| {lang} | {t} | {dups} | {n5}/{bases} | {n10}/{bases} | {lost} |")


if __name__ == "__main__":
    main()
