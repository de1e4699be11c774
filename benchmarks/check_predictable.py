"""Issue 38's targets on held-out cases: sets built afresh with a seed no test or benchmark
uses for these builders (default 7), each target checked and printed as PASS / FAIL with its
numbers. Accuracy only (no timings); ~2-4 min on a loaded machine, Spark included.

    NEARDUP_CORPORA=/work/shared/corpora python benchmarks/check_predictable.py --seed 7

1. **Monotone recall**: ``monotone_threshold.py``'s sets (originals, each followed by a 10 %
   then a 5 %-edited copy, among background articles; en Reuters, zh People's Daily) decided
   at 0.6 / 0.5 / 0.4 / 0.3: no planted copy found at a threshold is lost at a lower one, the
   duplicate count never falls, and the CLI and a ``neardup serve`` on loopback (``--threshold
   0.4``) give the library's decisions.
2. **One similarity**: short texts (< 50 characters: Reuters sentences, shopping reviews)
   each with a copy whose shingle set is the same (case, punctuation, full-width forms):
   similarity 1.0 in the library, the CLI's rows, ``explain A B`` and a ``neardup serve``
   started on loopback, with the short-text threshold (0.8) shown as ``threshold``.
3. **Unsorted windows**: ``bench_disorder.py``'s 900 rows (copies 0-35 h after their
   original) with ``--window 36h``, written day-cycled and with a random lateness under
   40 h: every row's decision equals the sorted file's at the default ``--max-disorder``
   (48h), and no row is named late.
4. **Re-runs**: the en set split in two days on one ``--state`` (at 0.4): the two days write
   the one run's rows; day 2 run again: the state's document count unchanged, the output
   byte-identical, the rows counted as already decided.
5. **explain FILE ID = dedup**: a file of originals with 12 % and 5 % copies (cluster
   refusals at ``--threshold 0.4 --cluster-similarity 0.5``), exact and short copies:
   ``explain FILE ID`` gives every document the status, duplicate_of, similarity and
   cluster_id dedup wrote, with and without those options; refusals occur.
6. **Pairs across engines**: ``--pairs`` and ``--out`` of the en set at 0.4, and of 3.'s
   day-cycled file with ``--window 36h``, local against Spark local mode (the executors' plan:
   ``spark.neardup.smallJobDocs=0``), byte for byte.
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import numpy as np
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parent.parent))
import neardup
from bench_disorder import DAY, HOUR
from bench_disorder import planted as disorder_set
from bench_edited import _edit
from monotone_threshold import planted as monotone_set
from neardup.cli import cli
from neardup.dedup import Deduplicator
from neardup.eval.corpora import load_corpus
from neardup.verify import shingle_hashes

DECISION = ("status", "duplicate_of", "similarity", "cluster_id")
RESULTS: list[tuple[str, bool, str]] = []


def check(name: str, ok: bool, detail: str) -> None:
    """Record and print one target's outcome."""
    RESULTS.append((name, ok, detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}", flush=True)


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def docs_of(ids: list[str], texts: list[str]) -> list[dict[str, Any]]:
    return [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)]


def dedup(src: Path, out: Path, *extra: str) -> tuple[list[dict[str, Any]], str]:
    """``neardup dedup SRC --out OUT EXTRA``: its rows and its summary."""
    r = CliRunner().invoke(cli, ["dedup", str(src), "--out", str(out), *extra])
    if r.exit_code != 0:
        raise SystemExit(f"dedup {extra} exited {r.exit_code}: {r.output}")
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()], r.output


def library_rows(texts: list[str], ids: list[str], **opts: Any) -> list[dict[str, Any]]:
    """The library's decisions as the CLI writes them (ids, similarity to 4 places)."""
    d = Deduplicator(**opts).feed(texts, ids=ids)
    rows = []
    for i in range(len(texts)):
        dup = int(d.duplicate_of[i])
        sim = None if dup < 0 else round(float(d.similarity[i]), 4)
        rows.append(
            {
                "status": d.statuses[i],
                "duplicate_of": None if dup < 0 else ids[dup],
                "similarity": sim,
                "cluster_id": int(d.cluster_id[i]),
            }
        )
    return rows


def monotone(tmp: Path, seed: int, bases: int, background: int) -> None:
    """Target 1; leaves the en set in ``tmp/en.jsonl`` for targets 4 and 6."""
    for lang in ("en", "zh"):
        texts, orig, _ = monotone_set(lang, bases, background, seed)
        copies = [i for i, o in enumerate(orig) if o != i]
        seen: set[int] = set()
        lost, counts = 0, []
        for t in (0.6, 0.5, 0.4, 0.3):
            d = Deduplicator(threshold=t).run(texts)
            found = {i for i in copies if d.cluster_id[i] == d.cluster_id[orig[i]]}
            lost += len(seen - found)
            seen |= found
            counts.append(int(sum(s in ("duplicate", "exact_duplicate") for s in d.statuses)))
        grows = all(a <= b for a, b in itertools.pairwise(counts))
        detail = f"duplicates at 0.6/0.5/0.4/0.3 {counts}, copies lost on lowering {lost}"
        check(f"monotone recall ({lang})", lost == 0 and grows, detail)
        ids = [f"{lang}{i}" for i in range(len(texts))]
        src = write(tmp / f"{lang}.jsonl", docs_of(ids, texts))
        rows, _ = dedup(src, tmp / f"{lang}-out.jsonl", "--threshold", "0.4")
        got = [{k: r[k] for k in DECISION} for r in rows]
        want = library_rows(texts, ids, threshold=0.4)
        same = sum(a == b for a, b in zip(got, want, strict=True))
        check(f"CLI = library at 0.4 ({lang})", got == want, f"{same}/{len(want)} rows equal")
        served = [{k: r[k] for k in DECISION} for r in serve(tmp, docs_of(ids, texts), 0.4)]
        same = sum(a == b for a, b in zip(served, want, strict=True))
        check(f"service = library at 0.4 ({lang})", served == want, f"{same}/{len(want)} equal")


def serve(tmp: Path, docs: list[dict[str, Any]], threshold: float | None) -> list[dict[str, Any]]:
    """The answers of a ``neardup serve`` on loopback (a fresh data directory) to ``docs``,
    posted in batches of 50."""
    from tests.server.server_helpers import Server

    options = () if threshold is None else ("--threshold", str(threshold))
    server = Server(Path(tempfile.mkdtemp(dir=tmp)) / "data", *options).start()
    try:
        return [r for at in range(0, len(docs), 50) for r in server.decide(docs[at : at + 50])]
    finally:
        server.stop()


def short_pairs(seed: int, n: int) -> list[tuple[str, str]]:
    """``n`` short texts (Reuters sentences, shopping reviews; 15-49 characters) and a copy of
    each with the same shingle set (case, punctuation, full-width forms changed)."""
    rng = random.Random(seed)
    en = {s.strip() for t in load_corpus("reuters")[1][:3000] for s in t.split(".")}
    zh = set(load_corpus("shopping")[1])
    out: list[tuple[str, str]] = []
    for pool, copy in (
        (sorted(t for t in en if 15 <= len(t) < 50 and t.count(" ") >= 3), _en_copy),
        (sorted(t for t in zh if 15 <= len(t) < 50), _zh_copy),
    ):
        for text in rng.sample(pool, n):
            other = copy(text, rng)
            if set(shingle_hashes(text).tolist()) == set(shingle_hashes(other).tolist()):
                out.append((text, other))
    return out


def _en_copy(text: str, rng: random.Random) -> str:
    words = [w.upper() if rng.random() < 0.5 else w.lower() for w in text.split()]
    return ",  ".join(words) + "!"


def _zh_copy(text: str, rng: random.Random) -> str:
    # full-width letters and digits (NFKC folds them back) and punctuation moved
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in text)
    cut = rng.randrange(1, len(wide))
    return wide[:cut] + "！" + wide[cut:].replace("，", "。")


def one_similarity(tmp: Path, seed: int) -> None:
    """Target 2."""
    pairs = short_pairs(seed, 15)
    texts = [t for pair in pairs for t in pair]
    ids = [f"s{i}" for i in range(len(texts))]
    copies = set(ids[1::2])
    lib = library_rows(texts, ids)
    rows, _ = dedup(
        write(tmp / "short.jsonl", docs_of(ids, texts)),
        tmp / "short-out.jsonl",
    )
    explained = []
    for a, b in pairs:
        r = CliRunner().invoke(cli, ["explain", a, b, "--json"])
        explained.append(json.loads(r.stdout) if r.exit_code == 0 else {"error": r.output})
    served = serve(tmp, docs_of(ids, texts), None)
    surfaces = {
        "library": [r["similarity"] for r, i in zip(lib, ids, strict=True) if i in copies],
        "CLI": [r["similarity"] for r in rows if r["id"] in copies],
        "explain": [e.get("similarity") for e in explained],
        "service": [r["similarity"] for r in served if r["id"] in copies],
    }
    thresholds = [r["threshold"] for r in rows if r["id"] in copies]
    thresholds += [e.get("threshold") for e in explained]
    thresholds += [r["threshold"] for r in served if r["id"] in copies]
    for name, sims in surfaces.items():
        ok = sims == [1.0] * len(pairs) and set(thresholds) == {0.8}
        check(f"one similarity ({name})", ok, f"{sims.count(1.0)}/{len(pairs)} pairs at 1.0")


def unsorted_windows(tmp: Path, seed: int) -> None:
    """Target 3."""
    texts, ts = disorder_set(seed)
    iso = [datetime.fromtimestamp(t, UTC).isoformat() for t in ts]
    docs = [
        {"id": f"w{i}", "text": t, "ts": s} for i, (t, s) in enumerate(zip(texts, iso, strict=True))
    ]
    rng = np.random.default_rng(seed)
    hour = (ts % DAY) // HOUR
    orders: dict[str, Any] = {
        "sorted": np.argsort(ts, kind="stable"),
        "day-cycled": np.lexsort((hour, ts // DAY)),
        "lateness < 40h": np.argsort(ts + rng.uniform(0, 40 * HOUR, ts.size), kind="stable"),
    }
    opts = ("--time-field", "ts", "--window", "36h")
    got: dict[str, dict[str, Any]] = {}
    for name, order in orders.items():
        src = write(tmp / f"win-{name[:3]}.jsonl", [docs[i] for i in order])
        rows, summary = dedup(src, tmp / f"win-{name[:3]}-out.jsonl", *opts)
        got[name] = {r["id"]: {k: r[k] for k in DECISION} for r in rows}
        if name != "sorted":
            same = sum(got[name][i] == v for i, v in got["sorted"].items())
            late = "out of order" in summary
            dups = sum(v["status"] != "unique" for v in got["sorted"].values())
            detail = f"{same}/{len(docs)} decisions equal ({dups} non-unique), late named: {late}"
            check(f"unsorted = sorted ({name})", got[name] == got["sorted"] and not late, detail)


def reruns(tmp: Path) -> None:
    """Target 4."""
    rows = [json.loads(line) for line in (tmp / "en.jsonl").read_text("utf-8").splitlines()]
    half = len(rows) // 2
    day1, day2 = write(tmp / "day1.jsonl", rows[:half]), write(tmp / "day2.jsonl", rows[half:])
    st, opts = tmp / "state", ("--state", str(tmp / "state"), "--threshold", "0.4")
    first = dedup(day1, tmp / "o1.jsonl", *opts)[0] + dedup(day2, tmp / "o2.jsonl", *opts)[0]
    n = Deduplicator.load(st).n_documents
    _, summary = dedup(day2, tmp / "o3.jsonl", *opts)
    again = Deduplicator.load(st).n_documents
    same = (tmp / "o2.jsonl").read_bytes() == (tmp / "o3.jsonl").read_bytes()
    counted = f"already decided: {len(rows) - half} documents" in summary
    detail = f"state {n} -> {again} documents, output identical: {same}, counted: {counted}"
    check("re-run idempotent", n == again == len(rows) and same and counted, detail)
    # the two days on the state decide as one run of the whole file (monotone's en-out)
    whole = [json.loads(line) for line in (tmp / "en-out.jsonl").read_text("utf-8").splitlines()]
    equal = sum(a == b for a, b in zip(first, whole, strict=True))
    check("two days on --state = one run", first == whole, f"{equal}/{len(whole)} rows equal")


def explain_file(tmp: Path, seed: int) -> None:
    """Target 5."""
    rng = np.random.default_rng(seed)
    pool = [t for t in load_corpus("reuters")[1] if 500 < len(t) < 2000]
    zh = [t for t in load_corpus("peoples_daily")[1] if 300 < len(t) < 1500]
    picked = [pool[i] for i in rng.choice(len(pool), 10, replace=False)]
    docs: list[dict[str, Any]] = []
    for k, text in enumerate(picked[:6]):
        docs += [{"id": f"o{k}", "text": text}, {"id": f"t{k}", "text": _edit(text, 0.12, rng)}]
        docs.append({"id": f"f{k}", "text": _edit(text, 0.05, rng)})
    docs += [{"id": f"b{k}", "text": t} for k, t in enumerate(picked[6:])]
    z = zh[int(rng.integers(len(zh)))]
    docs += [{"id": "z", "text": z}, {"id": "z5", "text": _edit(z, 0.05, rng)}]
    docs += [{"id": "x", "text": picked[0]}, {"id": "s", "text": "Oil prices fell on Monday."}]
    docs += [{"id": "s2", "text": "OIL PRICES fell, on Monday!"}]
    rng.shuffle(docs[18:])  # originals first, the rest in a held-out order
    src = write(tmp / "explain.jsonl", docs)
    for options in (["--threshold", "0.4", "--cluster-similarity", "0.5"], []):
        rows, _ = dedup(src, tmp / "explain-out.jsonl", *options)
        wrong, outcomes = [], []
        for row in rows:
            r = CliRunner().invoke(cli, ["explain", str(src), row["id"], "--json", *options])
            info = json.loads(r.stdout) if r.exit_code == 0 else {}
            if any(info.get(k) != row[k] for k in DECISION):
                wrong.append(row["id"])
            outcomes += [c["outcome"] for c in info.get("candidates", [])]
        refused = outcomes.count("refused")
        ok = not wrong and (refused > 0 or not options)
        detail = f"{len(rows) - len(wrong)}/{len(rows)} equal {wrong}, refusals {refused}"
        check(f"explain FILE ID = dedup {options or '(defaults)'}", ok, detail)


SPARK = (
    "--engine",
    "spark",
    "--spark-master",
    "local[2]",
    "--spark-conf",
    "spark.neardup.smallJobDocs=0",  # the executors' plan, not the driver's small-job one
    "--spark-conf",
    "spark.ui.enabled=false",
)


def pairs_engines(tmp: Path) -> None:
    """Target 6, and target 3 on Spark (the day-cycled file of :func:`unsorted_windows`;
    ``--pairs`` is refused with ``--window``: ``--out`` alone)."""
    runs = {
        "pairs": (tmp / "en.jsonl", ("--threshold", "0.4")),
        "unsorted window": (tmp / "win-day.jsonl", ("--time-field", "ts", "--window", "36h")),
    }
    for name, (src, opts) in runs.items():
        files = {}
        for engine in (("--engine", "local"), SPARK):
            pairs, out = tmp / f"pairs-{engine[1]}.jsonl", tmp / f"out-{engine[1]}.jsonl"
            pairs.write_bytes(b"")
            more = () if "--window" in opts else ("--pairs", str(pairs))
            dedup(src, out, *opts, *more, *engine)
            files[engine[1]] = (pairs.read_bytes(), out.read_bytes())
        n = files["local"][0].count(b"\n")
        same = files["local"] == files["spark"]
        rows = files["local"][1].count(b"\n")
        detail = f"{n} pairs, {rows} rows; --pairs and --out equal: {same}"
        check(f"{name}: local = Spark", same and rows > 0, detail)


@click.command()
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--bases", type=int, default=60, show_default=True)
@click.option("--background", type=int, default=240, show_default=True)
@click.option("--no-spark", is_flag=True, help="Leave out target 6 (no Java / PySpark).")
def main(seed: int, bases: int, background: int, no_spark: bool) -> None:
    """Check every target; exit 1 when one fails."""
    print(f"neardup from {Path(neardup.__file__).parent}, seed {seed}", flush=True)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        steps: list[Callable[[], None]] = [
            lambda: monotone(tmp, seed, bases, background),
            lambda: one_similarity(tmp, seed),
            lambda: unsorted_windows(tmp, seed),
            lambda: reruns(tmp),
            lambda: explain_file(tmp, seed),
        ]
        if not no_spark:
            steps.append(lambda: pairs_engines(tmp))
        for step in steps:
            step()
    failed = [name for name, ok, _ in RESULTS if not ok]
    print(
        f"{len(RESULTS) - len(failed)}/{len(RESULTS)} checks pass"
        + (f"; FAIL: {failed}" * bool(failed))
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
