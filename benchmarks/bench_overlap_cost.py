"""Cost of partial-copy detection (issue 25): overlap / dedup wall ratio, and cost per document.

``ratio``: ``neardup overlap`` and ``neardup dedup`` (the CLI, separate processes, alternating,
``--repeat`` times each) on the same input, in the same run: Reuters-21578 and a synthetic set
(``--synthetic N`` documents, below). Prints each command's best and median wall time, CPU time
(user + system, all threads: on a shared machine compare these) and peak RSS, and the ratios
of the medians; ``--tree SRC`` (repeated) times each source tree in turn, in the same rounds.

``scale``: ``OverlapFinder.add`` (``--stream``: ``OverlapFinder.stream``, the CLI's path) over
``--n`` synthetic documents in one process; the time per document (wall and CPU of all
threads) over each stretch between checkpoints (it must stay flat: ``mean_over_first`` is the
mean over all stretches against the first, ``max_over_first`` the worst stretch against it)
and the peak RSS. ``--cache FILE`` keeps the generated texts (JSONL) for the next run (the
generation of 10^6 documents takes ~3 minutes; a smaller ``n`` reads the first ``n``).

``paired``: the cost per document at 10^5 and at 10^6 documents measured in the same minutes
(two finders in one process taking turns), for the last stretch (``marginal``) and for the
whole run (``whole``, ``scale``'s mean). Use it for the flatness ratio: ``scale``'s separate
runs move with the machine (its stretches by 1.5x over minutes on a shared VM).

Synthetic documents: 8-20 sentences of 8-25 words drawn from Reuters' word frequencies (so
unrelated documents share only common short phrases, as unrelated news does), and 5 % of them
with a planted passage: 1-8 consecutive sentences of an earlier document (uniform over all
earlier ones), about 5 % of its words replaced.

    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_cost.py ratio --repeat 3
    python benchmarks/bench_overlap_cost.py ratio --repeat 5 --synthetic 0 \
        --tree /path/to/main/src --tree src
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_cost.py scale --n 100000
    python benchmarks/bench_overlap_cost.py scale --n 1000000 --checkpoints 10 --stream \
        --cache /tmp/synthetic-1e6.jsonl
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_cost.py scale --n 1000000 \
        --checkpoints 10 --cache /tmp/synthetic-1e6.jsonl
    flock /tmp/neardup-bench.lock python benchmarks/bench_overlap_cost.py paired \
        --cache /tmp/synthetic-1e6.jsonl
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click

from neardup.eval.corpora import corpora_dir


def _vocab() -> tuple[list[str], list[int]]:
    counts: Counter[str] = Counter()
    with gzip.open(corpora_dir() / "reuters21578/docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            counts.update(w for w in json.loads(line)["text"].split() if w.isalpha())
    words = sorted(counts)
    return words, [counts[w] for w in words]


def synthetic(n: int, seed: int = 1, copy_rate: float = 0.05) -> list[str]:
    """``n`` documents (module docstring); deterministic for ``(n, seed)``."""
    rng = random.Random(seed)
    words, weights = _vocab()
    cum = list(_accumulate(weights))
    docs: list[list[str]] = []
    for i in range(n):
        k = rng.randint(8, 20)
        drawn = rng.choices(words, cum_weights=cum, k=k * 25)
        sents, at = [], 0
        for _ in range(k):
            m = rng.randint(8, 25)
            sents.append(" ".join(drawn[at : at + m]).capitalize() + ".")
            at += m
        if i and rng.random() < copy_rate:
            src = docs[rng.randrange(i)]
            a = rng.randrange(len(src))
            piece = src[a : a + rng.randint(1, 8)]
            piece = [
                " ".join(rng.choice(words) if rng.random() < 0.05 else w for w in s.split())
                for s in piece
            ]
            j = rng.randrange(len(sents) + 1)
            sents[j:j] = piece
        docs.append(sents)
    return [" ".join(s) for s in docs]


def _accumulate(xs: list[int]) -> list[int]:
    out, total = [], 0
    for x in xs:
        total += x
        out.append(total)
    return out


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, all threads) and peak RSS (MiB) of one
    command. On a shared machine compare CPU: another job's load stretches the wall time."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed ({status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def _ratio(path: Path, repeat: int, out: Path, trees: tuple[str, ...] = ()) -> dict[str, Any]:
    """Both commands on ``path``, ``repeat`` rounds; with ``trees`` (source folders) each
    round runs them once per tree (``PYTHONPATH``), in turn: the trees share the minutes."""
    py = [sys.executable, "-m", "neardup"]
    cmds = {n: [*py, n, str(path), "--out", str(out / f"{n}.jsonl")] for n in ("dedup", "overlap")}
    envs: dict[str, dict[str, str] | None] = {t: {**os.environ, "PYTHONPATH": t} for t in trees}
    envs = envs or {"": None}
    runs: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for _ in range(repeat):
        for tree, env in envs.items():
            for name, cmd in cmds.items():
                runs.setdefault((tree, name), []).append(_run(cmd, env))
    res: dict[str, Any] = {}
    for tree in envs:
        got: dict[str, Any] = {}
        for name in cmds:
            rs = runs[tree, name]
            walls, cpus = [r[0] for r in rs], [r[1] for r in rs]
            got[name] = {
                "best_s": round(min(walls), 2),
                "median_s": round(statistics.median(walls), 2),
                "cpu_best_s": round(min(cpus), 2),
                "cpu_median_s": round(statistics.median(cpus), 2),
                "peak_rss_mib": round(max(r[2] for r in rs)),
            }
        for key, field in (("ratio", "median_s"), ("cpu_ratio", "cpu_median_s")):
            got[f"{key}_median"] = round(got["overlap"][field] / got["dedup"][field], 2)
        got["ratio_best"] = round(got["overlap"]["best_s"] / got["dedup"]["best_s"], 2)
        got["cpu_ratio_best"] = round(got["overlap"]["cpu_best_s"] / got["dedup"]["cpu_best_s"], 2)
        res[tree or "tree"] = got
    res["passages"] = sum(1 for _ in (out / "overlap.jsonl").open())
    return res if trees else {**res.pop("tree"), **res}


@click.group()
def main() -> None:
    """Cost of neardup.overlap (module docstring)."""


@main.command()
@click.option("--repeat", default=3, show_default=True)
@click.option("--synthetic", "n_synth", default=20000, show_default=True, help="0: none")
@click.option("--tree", "trees", multiple=True, help="a source folder (PYTHONPATH) to time")
def ratio(repeat: int, n_synth: int, trees: tuple[str, ...]) -> None:
    """overlap / dedup wall and CPU time, CLI, same input, same run (``--tree``: of each
    source tree, in turn)."""
    report: dict[str, Any] = {"load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        reuters = corpora_dir() / "reuters21578/docs.jsonl.gz"
        report["reuters"] = _ratio(reuters, repeat, out, trees)
        if n_synth:
            synth = out / "synth.jsonl"
            with synth.open("w", encoding="utf-8") as f:
                for i, text in enumerate(synthetic(n_synth)):
                    f.write(json.dumps({"id": i, "text": text}) + "\n")
            report[f"synthetic_{n_synth}"] = _ratio(synth, repeat, out, trees)
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))


def _texts(n: int, cache: Path | None) -> list[str]:
    """``synthetic(n)``: the first ``n`` texts of ``cache`` when it holds that many (the texts
    of a smaller ``n`` are a prefix of a larger one's), else generated and written there."""
    if cache is not None and cache.exists():
        with cache.open(encoding="utf-8") as f:
            texts = [json.loads(line) for line in itertools.islice(f, n)]
        if len(texts) == n:
            return texts
    texts = synthetic(n)
    if cache is not None:
        with cache.open("w", encoding="utf-8") as f:
            f.writelines(json.dumps(t) + "\n" for t in texts)
    return texts


@main.command()
@click.option("--n", default=100000, show_default=True)
@click.option("--checkpoints", default=5, show_default=True)
@click.option("--cache", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option(
    "--stream", is_flag=True, help="OverlapFinder.stream (the CLI's path: three threads) for add"
)
def scale(n: int, checkpoints: int, cache: Path | None, stream: bool) -> None:
    """Per-document time of OverlapFinder.add (or stream) as the collection grows, wall and
    CPU (all threads: on a shared machine compare these), and peak RSS."""
    from neardup.overlap import OverlapFinder

    t0 = time.perf_counter()
    texts = _texts(n, cache)
    built = time.perf_counter() - t0
    finder = OverlapFinder()
    marks = sorted({max(1, n * (i + 1) // checkpoints) for i in range(checkpoints)})
    rows, found, last_i = [], 0, 0
    last_t, last_c = time.perf_counter(), time.process_time()
    added = (
        finder.stream((t, i) for i, t in enumerate(texts, 1))
        if stream
        else (finder.add(t, i) for i, t in enumerate(texts, 1))
    )
    for i, got in enumerate(added, 1):
        found += len(got)
        if i in marks:
            now, cpu = time.perf_counter(), time.process_time()
            per = {"us_per_doc": 1e6 * (now - last_t), "cpu_us_per_doc": 1e6 * (cpu - last_c)}
            rows.append({"docs": i, **{k: round(v / (i - last_i), 1) for k, v in per.items()}})
            last_t, last_c, last_i = now, cpu, i
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_doc = [r["us_per_doc"] for r in rows]
    cpu_doc = [r["cpu_us_per_doc"] for r in rows]
    report = {
        "n": n,
        "stream": stream,
        "load": os.getloadavg(),
        "build_s": round(built, 1),
        "stretches": rows,
        "mean_us_per_doc": round(statistics.mean(per_doc), 1),
        "mean_over_first": round(statistics.mean(per_doc) / per_doc[0], 2),
        "max_over_first": round(max(per_doc) / per_doc[0], 2),
        "mean_cpu_us_per_doc": round(statistics.mean(cpu_doc), 1),
        "cpu_mean_over_first": round(statistics.mean(cpu_doc) / cpu_doc[0], 2),
        "passages": found,
        "peak_rss_mib": round(rss),
    }
    print(json.dumps(report, indent=1))


@main.command()
@click.option("--small", default=100000, show_default=True)
@click.option("--big", default=1000000, show_default=True)
@click.option("--timed", default=50000, show_default=True, help="documents timed at each size")
@click.option("--chunk", default=500, show_default=True)
@click.option("--cache", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--params", default="{}", show_default=True, help="OverlapFinder parameters (JSON)")
def paired(small: int, big: int, timed: int, chunk: int, cache: Path | None, params: str) -> None:
    """Cost per document at two sizes, both timed in the same minutes, in one process.

    ``marginal``: one finder holds the first ``small - timed`` documents, another the first
    ``big - timed``; then each adds its next ``timed`` documents (the last stretch of ``scale``),
    ``chunk`` at a time, taking turns (the first to go alternates). ``whole``: two new finders
    add all ``small`` and all ``big`` documents, in turns of ``chunk * small / big`` and
    ``chunk`` documents, so that both runs span the same minutes (``scale``'s mean per
    document). A slow spell of the machine falls on both sides, so each ratio is the size's
    cost, not the machine's mood: on a shared VM ``scale``'s stretches move by 1.5x over
    minutes, the ratios here by a few hundredths.
    """
    from neardup.overlap import OverlapFinder

    texts = _texts(big, cache)

    def turns(finders: dict[str, Any], spans: dict[str, tuple[int, int, int]]) -> dict[str, float]:
        spent = dict.fromkeys(finders, 0.0)
        at = {k: a for k, (a, _, _) in spans.items()}
        r = 0
        while any(at[k] < spans[k][1] for k in finders):
            for name in list(finders)[r % 2 :] + list(finders)[: r % 2]:
                f, (_, end, step) = finders[name], spans[name]
                t0 = time.perf_counter()
                for i in range(at[name], min(at[name] + step, end)):
                    f.add(texts[i], i + 1)
                spent[name] += time.perf_counter() - t0
                at[name] = min(at[name] + step, end)
            r += 1
        return spent

    kw = json.loads(params)
    report: dict[str, Any] = {"small": small, "big": big, "params": kw}
    report["load_before"] = os.getloadavg()
    finders = {"small": OverlapFinder(**kw), "big": OverlapFinder(**kw)}
    starts = {"small": small - timed, "big": big - timed}
    for name, start in starts.items():
        for i, text in enumerate(texts[:start], 1):
            finders[name].add(text, i)
    spent = turns(finders, {k: (a, a + timed, chunk) for k, a in starts.items()})
    report["marginal"] = {
        "timed": timed,
        "us_per_doc": {k: round(1e6 * v / timed, 1) for k, v in spent.items()},
        "big_over_small": round(spent["big"] / spent["small"], 3),
    }
    del finders  # its memory back before the next two are built
    whole = {"small": OverlapFinder(**kw), "big": OverlapFinder(**kw)}
    step = max(1, chunk * small // big)
    spent = turns(whole, {"small": (0, small, step), "big": (0, big, chunk)})
    sizes = {"small": small, "big": big}
    report["whole"] = {
        "us_per_doc": {k: round(1e6 * spent[k] / n, 1) for k, n in sizes.items()},
        "big_over_small": round(spent["big"] / big / (spent["small"] / small), 3),
    }
    report["load_after"] = os.getloadavg()
    report["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
