"""Cost per document of the default dedup as the collection grows (issue 13), and its recall.

Two parts, results in benchmarks/README.md ("Scale"):

``index``: the decision step of ``Deduplicator().feed`` (candidate keys, lookups, verification,
greedy rule, adding kept documents) on synthesised per-document data, chunk by chunk
(16,384 documents, the CLI's chunk size) up to ``--n``: random 64-bit fingerprints and random
8-bit MinHash sketches for unrelated documents, and ``--copy-rate`` planted copies of recent
documents whose sketch keeps each value with probability ``--keep`` (estimated Jaccard ~ that
value) and whose fingerprint has 8 bits flipped. Fingerprinting is skipped (its cost does not
depend on N; the ``text`` part measures it), so this isolates what grows with N. Prints the
time per document at each checkpoint, candidates per document, state bytes per document and
the share of planted copies found (it must not fall as N grows). ``--design`` runs the
default (``bands``: MinHash LSH bands, :class:`~neardup.dedup.candidates.BandCandidates`) and
the design before issue 13 (``hamming14``: ``Deduplicator(k=14)``, exact radius-14 search) on
the same stream, each until ``--n`` or ``--budget`` seconds of deciding.

``text``: news-length documents made of 8-20 sentences sampled from Reuters-21578, with 5 %
planted copies edited by ``neardup.eval.perturb`` (substitute, 5 % of words), through the
whole ``Deduplicator().feed`` (fingerprints, sketches, exact keys, decisions), timed by stage.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_scale.py index --n 2000000 --budget 400
    PYTHONPATH=src nice -n 10 python benchmarks/bench_scale.py text --n 100000
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from neardup.dedup.decisions import DUPLICATE, PreparedBatch
from neardup.dedup.pipeline import Deduplicator
from neardup.verify import MinHashVerifier

CHUNK = 16384
WIDTH = MinHashVerifier().width  # sketch columns of the default verifier (193)


class _Prepared(Deduplicator):
    """A Deduplicator that decides precomputed chunks (the benchmark skips fingerprinting)."""

    _next_chunk: PreparedBatch

    def prepare(self, texts: Any, timestamps: Any = None) -> PreparedBatch:
        return self._next_chunk


def _synthetic_chunk(
    rng: np.random.Generator, n: int, base: int, copy_rate: float, is_copy: np.ndarray
) -> tuple[PreparedBatch, np.ndarray, np.ndarray]:
    """A batch of n unrelated documents, then the copy rows and their originals' positions.

    Originals are earlier non-copy documents within the last ~4 chunks (news is re-issued
    soon); ``is_copy`` (global) is updated.
    """
    fps = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    sk = rng.integers(0, 256, size=(n, WIDTH), dtype=np.uint8)
    sk[:, -1] = 0  # long texts
    copies = np.flatnonzero(rng.random(n) < copy_rate)
    copies = copies[base + copies > 0]
    is_copy[base + copies] = True
    lo = np.maximum(0, base + copies - 4 * CHUNK)
    orig = lo + (rng.random(copies.size) * (base + copies - lo)).astype(np.int64)
    for _ in range(4):  # resample originals that are copies themselves
        bad = is_copy[orig]
        orig[bad] = lo[bad] + (rng.random(int(bad.sum())) * (base + copies - lo)[bad]).astype(
            np.int64
        )
    ok = ~is_copy[orig]
    chunk = PreparedBatch(fps, np.zeros(n, bool), [], np.full(n, np.nan), np.full(n, 2000), sk)
    return chunk, copies[ok], orig[ok]


def _plant(
    rng: np.random.Generator,
    chunk: PreparedBatch,
    base: int,
    copies: np.ndarray,
    orig: np.ndarray,
    all_fps: np.ndarray,
    all_sk: np.ndarray,
    keep: float,
) -> None:
    """Overwrite copy rows: the original's sketch with each value kept w.p. ``keep``, its
    fingerprint with 8 random bit flips."""
    assert chunk.sketches is not None
    n = chunk.fps.size
    inside = orig >= base
    local = np.minimum(np.maximum(orig - base, 0), n - 1)
    src_fp = np.where(inside, chunk.fps[local], all_fps[orig])
    src_sk = np.where(inside[:, None], chunk.sketches[local], all_sk[orig])
    flips = np.zeros(copies.size, np.uint64)
    for _ in range(8):
        flips ^= np.uint64(1) << rng.integers(0, 64, copies.size).astype(np.uint64)
    chunk.fps[copies] = src_fp ^ flips
    same = rng.random(src_sk.shape) < keep
    chunk.sketches[copies] = np.where(same, src_sk, chunk.sketches[copies])
    chunk.sketches[copies, -1] = 0


DESIGNS: dict[str, int | None] = {"bands": None, "hamming14": 14}  # k: None = default


def _index(
    design: str,
    n_total: int,
    copy_rate: float,
    keep: float,
    seed: int,
    out: Path,
    budget_s: float,
    meta: dict[str, Any],
) -> None:
    """One design, chunk by chunk up to ``n_total`` or until ``budget_s`` seconds of deciding."""
    rng = np.random.default_rng(seed)  # same seed: both designs see the same stream
    dd = _Prepared(k=DESIGNS[design])
    all_fps = np.zeros(n_total, np.uint64)
    all_sk = np.zeros((n_total, WIDTH), np.uint8)
    is_copy = np.zeros(n_total, bool)
    checkpoints = {10**5, 2 * 10**5, 5 * 10**5, 10**6, 15 * 10**5, 2 * 10**6, 5 * 10**6, 10**7}
    found = total = 0
    window_t = window_n = spent = 0.0
    rows: list[dict[str, Any]] = []
    base = 0
    t_run = time.perf_counter()
    while base < n_total and spent < budget_s:
        n = min(CHUNK, n_total - base)
        chunk, copies, orig = _synthetic_chunk(rng, n, base, copy_rate, is_copy)
        _plant(rng, chunk, base, copies, orig, all_fps, all_sk, keep)
        chunk.keys.extend(rng.integers(1, 2**62, n).tolist())
        all_fps[base : base + n] = chunk.fps
        assert chunk.sketches is not None
        all_sk[base : base + n] = chunk.sketches
        dd._next_chunk = chunk
        t0 = time.perf_counter()
        d = dd.feed([""] * n)
        window_t += time.perf_counter() - t0
        spent += time.perf_counter() - t0
        window_n += n
        got = (d.status[copies] == DUPLICATE) & (d.duplicate_of[copies] == orig)
        found += int(got.sum())
        total += int(copies.size)
        base += n
        if any(base - n < c <= base for c in checkpoints):
            row = _checkpoint(dd, base, window_t, window_n, found, total, t_run)
            rows.append({"design": design, **row})
            window_t = window_n = 0.0
    if window_n:  # stopped by the budget between checkpoints
        row = _checkpoint(dd, base, window_t, window_n, found, total, t_run)
        rows.append({"design": design, **row, "stopped_by_budget": True})
    with (out / "scale_index.jsonl").open("a") as f:
        for row in rows:
            f.write(json.dumps({**meta, "keep": keep, "copy_rate": copy_rate, **row}) + "\n")


def _checkpoint(
    dd: Deduplicator, n: int, secs: float, docs: float, found: int, total: int, t_run: float
) -> dict[str, Any]:
    desc = dd.describe()
    cand = desc["candidates"]
    mem = desc["state_bytes"] + desc["sketch_bytes"] + cand.get("memory_bytes", 0)
    row = {
        "design": dd.describe()["candidates"]["design"],
        "n": n,
        "us_per_doc": round(1e6 * secs / docs, 2),
        "docs_per_s": round(docs / secs),
        "candidates_per_doc": round(cand.get("measured_candidates_per_query", 0.0), 3),
        "expected_random_candidates_per_doc": cand.get("expected_random_candidates_per_document"),
        "bytes_per_doc": round(mem / n, 1),
        "runs": len(cand.get("runs", [])),
        "copies_found": round(found / max(total, 1), 4),
        "copies": total,
        "elapsed_s": round(time.perf_counter() - t_run, 1),
    }
    click.echo(json.dumps(row))
    return row


def _news(n: int, copy_rate: float, seed: int) -> list[str]:
    from neardup.eval.corpora import load_corpus
    from neardup.eval.perturb import perturb

    rng = np.random.default_rng(seed)
    sentences = [
        s.strip() + "."
        for t in load_corpus("reuters")[1]
        for s in t.replace("\n", " ").split(". ")
        if len(s.split()) >= 6
    ]
    texts: list[str] = []
    for i in range(n):
        if i > 100 and rng.random() < copy_rate:
            src = texts[int(rng.integers(max(0, i - 4 * CHUNK), i))]
            texts.append(perturb(src, "substitute", 0.05, seed=int(rng.integers(2**31))))
            continue
        k = int(rng.integers(8, 21))
        texts.append(" ".join(sentences[j] for j in rng.integers(0, len(sentences), k)))
    return texts


def _text(n: int, copy_rate: float, seed: int, jobs: int, out: Path) -> None:
    t0 = time.perf_counter()
    texts = _news(n, copy_rate, seed)
    gen = time.perf_counter() - t0
    dd = _Prepared(n_jobs=jobs)
    prep = decide = 0.0
    for lo in range(0, n, CHUNK):
        part = texts[lo : lo + CHUNK]
        t1 = time.perf_counter()
        dd._next_chunk = Deduplicator.prepare(dd, part)
        t2 = time.perf_counter()
        prep += t2 - t1
        dd.feed(part)
        decide += time.perf_counter() - t2
    chars = sum(map(len, texts)) / n
    d = dd.state.decisions()
    row = {
        "n": n,
        "mean_chars": round(chars),
        "generate_s": round(gen, 1),
        "prepare_us_per_doc": round(1e6 * prep / n, 1),
        "decide_us_per_doc": round(1e6 * decide / n, 1),
        "docs_per_s": round(n / (prep + decide)),
        "duplicates": int((d.status == DUPLICATE).sum()),
        "jobs": jobs,
    }
    click.echo(json.dumps(row))
    with (out / "scale_text.jsonl").open("a") as f:
        f.write(json.dumps({**_meta(), **row}) + "\n")


@click.group()
def main() -> None:
    """Scale benchmark (see the module docstring)."""


@main.command("index")
@click.option("--n", "n_total", default=2_000_000, show_default=True)
@click.option("--copy-rate", default=0.05, show_default=True)
@click.option("--keep", default=0.7, show_default=True, help="Share of sketch values a copy keeps.")
@click.option("--seed", default=0, show_default=True)
@click.option(
    "--design",
    "designs",
    multiple=True,
    type=click.Choice(sorted(DESIGNS)),
    default=("bands", "hamming14"),
    show_default=True,
    help="Candidate designs, run one after the other on the same stream.",
)
@click.option(
    "--budget", default=300.0, show_default=True, help="Seconds of deciding per design, at most."
)
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def index_cmd(
    n_total: int,
    copy_rate: float,
    keep: float,
    seed: int,
    designs: tuple[str, ...],
    budget: float,
    out: Path,
) -> None:
    """Decision cost per document vs N on synthesised fingerprints and sketches."""
    out.mkdir(parents=True, exist_ok=True)
    meta = _meta()
    for design in designs:
        _index(design, n_total, copy_rate, keep, seed, out, budget, meta)


def _meta() -> dict[str, Any]:
    """Date, commit, kernels and machine of a run (stored with every row)."""
    import os
    import subprocess

    from neardup._backend import backend

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": commit,
        "kernels": backend(),
        "cpus": os.cpu_count(),
    }


def _lsm_shape(n_docs: int, merge_factor: int = 4) -> tuple[float, float]:
    """(rewrites per key row, mean runs per lookup) of the KeyTable's merge rule, fed in chunks."""
    runs: list[int] = []
    rewrites = total_runs = 0
    chunks = max(1, n_docs // CHUNK)
    for _ in range(chunks):
        runs.append(1)
        while len(runs) >= 2 and runs[-2] <= merge_factor * runs[-1]:
            b, a = runs.pop(), runs.pop()
            runs.append(a + b)
            rewrites += a + b
        total_runs += len(runs)
    return rewrites / chunks, total_runs / chunks


def _model(fixed_us: float, rows: int, bands: int) -> list[dict[str, Any]]:
    """Measure a bucket read and a merged row on a big run; project the cost per document."""
    from neardup.index.keytable import KeyTable

    rng = np.random.default_rng(0)
    h = rows // (2 * bands)
    table = KeyTable()
    table.add(rng.integers(0, 2**63, size=(h, bands), dtype=np.uint64), np.arange(h))
    table.add(rng.integers(0, 2**63, size=(h, bands), dtype=np.uint64), np.arange(h, 2 * h))
    run = table._runs[0]  # the two adds merged into one run of `rows` key rows
    queries = rng.integers(0, 2**63, size=(CHUNK, bands), dtype=np.uint64)
    t0 = time.perf_counter()
    table.lookup(queries)
    read_ns = 1e9 * (time.perf_counter() - t0) / (CHUNK * bands * len(table.runs))
    size, t0 = run.size, time.perf_counter()
    table._merge(run, run)  # what a merge costs per output row (it consumes the run: last)
    merge_ns = 1e9 * (time.perf_counter() - t0) / (2 * size)
    out = []
    for n in (10**7, 10**8, 10**9):
        rewrites, runs = _lsm_shape(n)
        us = fixed_us + bands * (runs * read_ns + rewrites * merge_ns) / 1e3
        out.append(
            {
                "n": n,
                "rewrites_per_row": round(rewrites, 1),
                "mean_runs": round(runs, 1),
                "bucket_read_ns": round(read_ns, 1),
                "merged_row_ns": round(merge_ns, 1),
                "fixed_us_per_doc": fixed_us,
                "model_us_per_doc": round(us, 1),
                "model_docs_per_s": round(1e6 / us),
                "model_hours": round(n * us / 1e6 / 3600, 2),
            }
        )
        click.echo(json.dumps(out[-1]))
    return out


@main.command("model")
@click.option("--fixed-us", default=20.0, show_default=True, help="Measured cost at 10^5 (us).")
@click.option("--rows", default=1 << 25, show_default=True, help="Key rows of the big run.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def model_cmd(fixed_us: float, rows: int, out: Path) -> None:
    """Cost model for 10^7..10^9 documents from measured constants (docs/ACCURACY.md)."""
    out.mkdir(parents=True, exist_ok=True)
    rows_out = _model(fixed_us, rows, 32)
    with (out / "scale_model.jsonl").open("a") as f:
        for row in rows_out:
            f.write(json.dumps({**_meta(), **row}) + "\n")


@main.command("text")
@click.option("--n", default=100_000, show_default=True)
@click.option("--copy-rate", default=0.05, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--jobs", default=1, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("benchmarks/results"))
def text_cmd(n: int, copy_rate: float, seed: int, jobs: int, out: Path) -> None:
    """End to end on news-length texts: prepare (fingerprint + sketch) vs decide, per document."""
    out.mkdir(parents=True, exist_ok=True)
    _text(n, copy_rate, seed, jobs, out)


if __name__ == "__main__":
    main()
