"""Issue 20's conflict, measured: the Reuters pairs that a 10 %-edit setting merges below
word-5-shingle Jaccard 0.5 look like 10 %-edited copies by every measure of the text.

For each pair: J5 / J2 / J1 (word or character shingle Jaccard, as ``shingle_hashes``), the
token longest-common-subsequence ratio (LCS / longer length: 1 - edit rate, for edits that
insert, delete or substitute tokens) and the share of differing tokens that are numbers. Rows:
Reuters pairs (document, its kept document) that ``--shingle-size 2 --threshold 0.64`` merges
with J5 < 0.5 (wrong by ``bench_accuracy``'s ground truth), then planted copies of
``bench_edited`` at 5 and 10 % edits (right by issue 20's ground truth).

    NEARDUP_CORPORA=../shared/corpora python benchmarks/edited_conflict.py [--seed 0]
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import click
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_edited import planted
from neardup.dedup import Deduplicator
from neardup.eval.corpora import load_corpus
from neardup.verify import MinHashVerifier, shingle_hashes

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NUMBER = re.compile(r"\d")


def units(text: str) -> list[str]:
    """Words, or Han characters for mostly-CJK text (NFKC, casefolded, letters and digits)."""
    t = unicodedata.normalize("NFKC", text).casefold()
    if len(_HAN.findall(t)) * 3 >= max(1, len(re.findall(r"\w", t))):
        return [c for c in t if c.isalnum()]
    return re.findall(r"[^\W_]+", t)


def lcs_matches(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004)."""
    if len(a) < len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for i, x in enumerate(b):
        masks[x] = masks.get(x, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - bin(v).count("1")


def _jaccard(a: Any, b: Any) -> float:
    x, y = set(a), set(b)
    return len(x & y) / len(x | y) if x | y else 1.0


def measures(s: str, t: str) -> dict[str, float]:
    ua, ub = units(s), units(t)
    differ = set(ua) ^ set(ub)
    numbers = sum(bool(_NUMBER.search(w)) for w in differ)
    return {
        "J5": _jaccard(shingle_hashes(s, 5).tolist(), shingle_hashes(t, 5).tolist()),
        "J2": _jaccard(shingle_hashes(s, 2).tolist(), shingle_hashes(t, 2).tolist()),
        "J1": _jaccard(ua, ub),
        "LCS ratio": lcs_matches(ua, ub) / max(len(ua), len(ub), 1),
        "numbers among differing": numbers / max(len(differ), 1),
    }


def _row(name: str, rows: list[dict[str, float]]) -> None:
    click.echo(f"| {name} | {len(rows)} |", nl=False)
    for key in rows[0]:
        q = np.quantile([r[key] for r in rows], [0.1, 0.5, 0.9])
        click.echo(f" {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} |", nl=False)
    click.echo("")


@click.command()
@click.option("--seed", default=0, show_default=True)
def main(seed: int) -> None:
    texts = load_corpus("reuters")[1]
    edited = Deduplicator(verifier=MinHashVerifier(ngram=2, band_ngram=3), threshold=0.64)
    d = edited.run(texts)
    reuters = []
    for i in np.flatnonzero(d.status == 1).tolist():
        m = measures(texts[int(d.duplicate_of[i])], texts[i])
        if m["J5"] < 0.5:
            reuters.append(m)
    keys = list(measures("a b", "a c"))
    click.echo(
        "| pairs | n | " + " | ".join(f"{k} (10th / median / 90th pct)" for k in keys) + " |"
    )
    click.echo("|---|---:|" + "---|" * len(keys))
    _row("Reuters, merged by the 10 %-edit setting, J5 < 0.5", reuters)
    for name in ("en", "zh-short", "zh-long"):
        ptexts, _, orig, copy, rate = planted(name, 600, 3000 if name != "zh-long" else 808, seed)
        for r in (0.05, 0.10):
            rows = [measures(ptexts[orig[p]], ptexts[copy[p]]) for p in np.flatnonzero(rate == r)]
            _row(f"{name}, planted copies at {r:.0%}", rows)


if __name__ == "__main__":
    main()
