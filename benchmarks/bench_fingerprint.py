"""Fingerprinting speed: neardup against the anchor libraries, in one run.

Usage (from the project root, with the ``bench`` extra installed)::

    python benchmarks/bench_fingerprint.py            # full run, ~3 minutes on 2 cores
    python benchmarks/bench_fingerprint.py --quick    # smaller slices, for a smoke test

Data: Reuters-21578 (English) and People's Daily 1998 (Chinese) from ``../shared/corpora``.
Prints a Markdown table (MB/s of UTF-8 input, one core unless marked) with each row's ratio to
PyPI ``simhash`` measured in the same run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import subprocess
import sys
from collections.abc import Callable

import jieba
import rjieba
import xxhash

from neardup import Fingerprinter

import anchors
from anchors import best_of, corpus_texts, megabytes

WORD = re.compile(r"\w+")


def rate(texts: list[str], fn: Callable[[list[str]], object], repeat: int = 3) -> float:
    fn(texts[:20])  # warm up (JIT cache load, dictionaries)
    return megabytes(texts) / best_of(lambda: fn(texts), repeat)


def pypi_simhash(texts: list[str]) -> None:
    import simhash

    for t in texts:
        simhash.Simhash(t)


def pybind_end_to_end(texts: list[str]) -> None:
    sp = anchors.simhash_pybind()
    for t in texts:
        sp.c_compute([xxhash.xxh3_64_intdigest(w.encode()) for w in WORD.findall(t.lower())])


def gaoya_insert(texts: list[str]) -> None:
    from gaoya.simhash import SimHashStringIndex

    index = SimHashStringIndex(num_blocks=4, hamming_distance=3, analyzer="word", lowercase=True)
    for i, t in enumerate(texts):
        index.insert_document(i, t)


def startup_seconds(code: str, runs: int = 5) -> float:
    """Median wall time of a fresh interpreter running ``code`` (after one warming run)."""
    cmd = [
        sys.executable,
        "-c",
        f"import time; t=time.perf_counter(); {code}; print(time.perf_counter() - t)",
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    return statistics.median(
        float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        for _ in range(runs)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small slices (smoke test)")
    args = parser.parse_args()
    limit = 2000 if args.quick else None
    en = corpus_texts("reuters", limit)
    zh = corpus_texts("peoples_daily", 300 if args.quick else None)
    en_small, zh_small = en[: len(en) // 10], zh[: len(zh) // 10]

    rows: list[tuple[str, str, float]] = []
    base_en = rate(en_small, pypi_simhash, repeat=1)
    base_zh = rate(zh_small, pypi_simhash, repeat=1)
    rows += [("en", "PyPI simhash `Simhash(text)` (anchor, 1/10 slice)", base_en)]

    def ours(cfg: dict[str, object], jobs: int = 1) -> Callable[[list[str]], object]:
        fp = Fingerprinter(**cfg)  # type: ignore[arg-type]
        return lambda ts: fp.fingerprint_many(ts, return_mask=True, n_jobs=jobs)

    rows += [
        ("en", "**neardup default** (`auto`: word 3-shingles, binary)", rate(en, ours({}))),
        ("en", "neardup default, `n_jobs=2` (2 processes)", rate(en, ours({}, 2))),
        (
            "en",
            "neardup word unigrams, TF",
            rate(en, ours({"analyzer": "word", "weighting": "tf"})),
        ),
        (
            "en",
            "neardup word 3-shingles, TF",
            rate(en, ours({"analyzer": "shingle", "weighting": "tf"})),
        ),
        ("en", "neardup char 5-grams, TF", rate(en, ours({"analyzer": "char", "weighting": "tf"}))),
        (
            "en",
            "simhash-pybind end-to-end (regex + xxh3 + C++ compute)",
            rate(en, pybind_end_to_end),
        ),
        ("en", "gaoya `SimHashStringIndex.insert_document` (Rust, words)", rate(en, gaoya_insert)),
        ("zh", "PyPI simhash `Simhash(text)` (anchor, 1/10 slice)", base_zh),
        (
            "zh",
            "**neardup default** (`auto`: char 5-grams of letters/digits, binary)",
            rate(zh, ours({})),
        ),
        ("zh", "neardup default, `n_jobs=2` (2 processes)", rate(zh, ours({}, 2))),
        (
            "zh",
            "neardup jieba words by Han run, 3-shingles, TF",
            rate(zh, ours({"analyzer": "shingle", "weighting": "tf"})),
        ),
        (
            "zh",
            "jieba `lcut` alone (segmentation only, 1/10 slice)",
            rate(zh_small, lambda ts: [jieba.lcut(t) for t in ts], repeat=1),
        ),
        (
            "zh",
            "rjieba `cut` alone (segmentation only)",
            rate(zh, lambda ts: [rjieba.cut(t) for t in ts]),
        ),
    ]
    print(
        f"\nbench_fingerprint.py{' --quick' if args.quick else ''} — {dt.date.today()} — "
        f"{anchors.machine_note()}"
    )
    print(
        f"English: {len(en)} docs, {megabytes(en):.1f} MB; "
        f"Chinese: {len(zh)} docs, {megabytes(zh):.1f} MB\n"
    )
    print("| text | what | MB/s | x PyPI simhash |")
    print("|---|---|---:|---:|")
    for lang, what, mbs in rows:
        base = base_en if lang == "en" else base_zh
        print(f"| {lang} | {what} | {mbs:.1f} | {mbs / base:.0f}x |")
    imp = startup_seconds("import neardup")
    first = startup_seconds(
        "from neardup import Fingerprinter; Fingerprinter().fingerprint('warm start')"
    )
    print(
        f"\nStart-up (median of 5 fresh processes): `import neardup` {imp:.3f} s; "
        f"import + first fingerprint (JIT cache warm) {first:.3f} s"
    )


if __name__ == "__main__":
    main()
