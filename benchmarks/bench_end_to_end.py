"""``neardup dedup`` end to end against Python's own ``json`` reading and writing the same file.

Both run as subprocesses on the same gzipped JSONL corpus (Reuters-21578 by default), so
interpreter start-up, imports, decompression, parsing and writing count for both. The anchor
reads every record with ``json.loads`` and writes it back with ``json.dumps`` (what any
JSONL-to-JSONL tool must at least do); neardup runs its default, verified dedup. Runs are
interleaved, best of ``--repeat`` each; the ratio is what issues 9 and 39 track (targets
<= 2x, <= 1.5x). CPU time (user + sys of the child) is reported beside wall time: on a shared
machine it moves much less. The children run with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` removed) after one untimed warm-up run each, as an installed
package runs (pip compiles the bytecode at install time); with it set, an editable install
recompiles every neardup module per run (~0.1 s).

    python benchmarks/bench_end_to_end.py                      # ~1 minute
    python benchmarks/bench_end_to_end.py --corpus peoples_daily --repeat 3
    python benchmarks/bench_end_to_end.py --profile            # where the time goes
    python benchmarks/bench_end_to_end.py --instructions       # ~2 minutes, needs valgrind
    python benchmarks/bench_end_to_end.py --switch-interval 0.0005  # + neardup, 0.5 ms GIL switch

``--profile`` runs ``neardup dedup`` in a child whose stage functions are wrapped by timers
(best of ``--repeat`` runs by total wall time): start-up and imports, reading (gunzip, JSON,
rows), normalising and packing, fingerprints and exact keys (on a "prep" thread, beside the
reading of the next chunk), MinHash sketches (on a third thread, beside the fingerprints; since
issue 24's one-pass kernel, fingerprints and sketches are one stage whose texts are split
between the prep thread and a second one),
decisions (on a third thread since issue 39: the main thread only reads and parses), writing,
and the rest (the CLI's own Python, waiting for the other threads included: the threads'
stages overlap the others and are not subtracted from it). Its peak
RSS and the process's CPU time come from ``getrusage``; each stage's CPU time of the thread
that ran it (``time.thread_time``: moves less than wall time on a loaded machine; the one-pass
stage's second thread is not in it) is listed too, and the main thread's own CPU time (the
critical path when it exceeds half of the rest on 2 cores).

``--instructions`` counts the instructions each of the two processes executes (all threads,
start-up included) under valgrind (``cachegrind --cache-sim=no``, ~50x slower): a ratio that
does not move with the machine's load, for VMs where ``perf stat -e instructions`` is not
supported. Under valgrind the CPU has no AVX-512 (the C kernels take their AVX2 paths) and the
threads run one at a time, so it counts work, not how it overlaps: time the wall ratio quiet.

Each measurement also prints the load average before and after, the UTC time and the commit:
ratios are only comparable within one run, and wall times only on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from neardup.eval.corpora import corpora_dir

FILES = {
    "reuters": "reuters21578/docs.jsonl.gz",
    "peoples_daily": "peoples_daily_199801/articles.jsonl.gz",
}

ANCHOR = """
import gzip, json, sys
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for line in f:
        if line.strip():
            out.write(json.dumps(json.loads(line), ensure_ascii=False) + "\\n")
"""

# the CLI under another GIL switch interval (Python's default 5 ms: a thread coming back from
# a C kernel may wait that long for the GIL while the reading thread runs Python)
SWITCH = """
import sys
sys.setswitchinterval(float(sys.argv.pop(1)))
sys.argv[0] = "neardup"
from neardup.cli import main
main()
"""

PROFILE = """
import sys, threading, time
from collections import defaultdict
t0 = float(sys.argv[1])
import neardup.cli, neardup.cli.dedup as cd
import neardup.dedup.dedup_state as pl, neardup.dedup.prepare as pr
import neardup.verify, neardup.index, numpy, orjson
imported = time.time()
acc, cpu, lock = defaultdict(float), defaultdict(float), threading.Lock()
def add(stage, dt, dc):
    with lock:
        acc[stage] += dt
        cpu[stage] += dc
def timed(stage, fn):
    def wrapper(*a, **k):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            add(stage, time.perf_counter() - t, time.thread_time() - c)
    return wrapper
def timed_iter(it):
    stage = "read + parse (gunzip, JSON, rows)"
    while True:
        t, c = time.perf_counter(), time.thread_time()
        try:
            x = next(it)
        except StopIteration:
            add(stage, time.perf_counter() - t, time.thread_time() - c)
            return
        add(stage, time.perf_counter() - t, time.thread_time() - c)
        yield x
docs = cd._Run.documents
cd._Run.documents = lambda self, *a, **k: timed_iter(docs(self, *a, **k))
pr.pack_prepared = timed("normalise + pack (prep thread)", pr.pack_prepared)
pr._fingerprints = timed("fingerprints (prep thread)", pr._fingerprints)
pr._keys = timed("exact keys (prep thread)", pr._keys)
pr._sketch_all = timed("MinHash sketches (sketch thread)", pr._sketch_all)
pr._fused = timed("fingerprints + sketches, one pass (prep thread, 2 cores)", pr._fused)
pl.decide_batch = timed("decisions: index, verify, greedy (decide thread)", pl.decide_batch)
import neardup.dedup.pipeline as pp
import neardup.dedup.dedup_state as ds
ds.DedupState.decide = timed(
    "decide step, all of it (decide thread)", ds.DedupState.decide)
cd.write_fast = timed("write output", cd.write_fast)
cd.write_generic = timed("write output", cd.write_generic)
t = time.perf_counter()
sys.argv[1:] = sys.argv[2:]
try:
    neardup.cli.main()
except SystemExit:
    pass
main = time.perf_counter() - t
out = {"start-up + imports": imported - t0, **acc}
out["other (CLI Python, chunking, state)"] = main - sum(
    v for k, v in acc.items() if "thread" not in k)
import json, resource
usage = resource.getrusage(resource.RUSAGE_SELF)
out["peak_rss_mib"] = usage.ru_maxrss / 1024
out["process_cpu_s"] = usage.ru_utime + usage.ru_stime
out["main_thread_cpu_s"] = time.thread_time()  # imports included: the critical path's CPU
out["cpu_s (this thread's CPU time in each stage)"] = {k: round(v, 3) for k, v in cpu.items()}
print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))
"""


def profile(corpus: str, repeat: int) -> dict[str, object]:
    """Stage times of ``neardup dedup`` on ``corpus`` (best run of ``repeat`` by wall time;
    ``corpus`` may also be a path)."""
    path = corpora_dir() / FILES[corpus] if corpus in FILES else Path(corpus)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        for i in range(repeat + 1):  # the first run warms the bytecode and page caches
            t0 = time.time()
            cmd = [sys.executable, "-c", PROFILE, repr(t0), "dedup", str(path), "--out", out]
            proc = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
            wall = time.time() - t0
            stages = json.loads(proc.stdout.strip().splitlines()[-1])
            if i and (not best or wall < float(best["wall_s"])):  # type: ignore[arg-type]
                best = {"corpus": corpus, "wall_s": round(wall, 3), **stages}
    return best


def _neardup() -> list[str]:
    exe = shutil.which("neardup", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "neardup"]


def _time(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def measure(corpus: str, repeat: int, switch: float | None = None) -> dict[str, object]:
    """Interleaved runs of ``neardup dedup`` and the stdlib anchor on ``corpus`` (a name of
    ``FILES`` or a path, e.g. ``bench_dedup.py``'s mixed collection); with ``switch``, a third
    command interleaved: ``neardup dedup`` under ``sys.setswitchinterval(switch)``."""
    path = corpora_dir() / FILES[corpus] if corpus in FILES else Path(corpus)
    if not path.exists():
        raise SystemExit(f"corpus {path} not found (set NEARDUP_CORPORA)")
    runs: dict[str, list[tuple[float, float]]] = {"anchor": [], "neardup": []}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        args = ["dedup", str(path), "--out", out]
        cmds = {
            "anchor": [sys.executable, "-c", ANCHOR, str(path), out],
            "neardup": [*_neardup(), *args],
        }
        if switch is not None:
            cmds["switch"] = [sys.executable, "-c", SWITCH, repr(switch), *args]
            runs["switch"] = []
        for cmd in cmds.values():  # warm-up: bytecode caches, page cache
            _time(cmd)
        for _ in range(repeat):
            for name, cmd in cmds.items():
                runs[name].append(_time(cmd))
    load_after = os.getloadavg()
    row = _row(runs["neardup"], runs["anchor"])
    if switch is not None:
        row["switch_interval"] = {"seconds": switch, **_row(runs["switch"], runs["anchor"])}
    return {"corpus": corpus, **row, **_context(load_before, load_after)}


def _row(ours: list[tuple[float, float]], anchor: list[tuple[float, float]]) -> dict[str, object]:
    """Best wall and CPU times of ``ours`` and of the ``anchor`` runs, and their ratios."""
    best, base = min(w for w, _ in ours), min(w for w, _ in anchor)
    cpu, cpu_base = min(c for _, c in ours), min(c for _, c in anchor)
    return {
        "neardup_dedup_s": round(best, 2),
        "stdlib_json_read_write_s": round(base, 2),
        "ratio": round(best / base, 2),
        "neardup_cpu_s": round(cpu, 2),
        "stdlib_json_cpu_s": round(cpu_base, 2),
        "cpu_ratio": round(cpu / cpu_base, 2),
        "runs_neardup": [round(w, 2) for w, _ in ours],
        "runs_anchor": [round(w, 2) for w, _ in anchor],
        "cpu_runs_neardup": [round(c, 2) for _, c in ours],
        "cpu_runs_anchor": [round(c, 2) for _, c in anchor],
    }


def _instructions(cmd: list[str]) -> int:
    """Instructions ``cmd`` executes (valgrind's ``I refs``, every thread and child)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    grind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes"]
    proc = subprocess.run(
        [*grind, "--cachegrind-out-file=/dev/null", *cmd],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    counts = [ln.split(":")[1] for ln in proc.stderr.splitlines() if "I   refs:" in ln]
    return sum(int(c.strip().replace(",", "")) for c in counts)


def instructions(corpus: str) -> dict[str, object]:
    """Instruction counts of ``neardup dedup`` and the stdlib anchor on ``corpus`` (one run
    each after a warm-up of both: bytecode caches)."""
    path = corpora_dir() / FILES[corpus] if corpus in FILES else Path(corpus)
    if not path.exists():
        raise SystemExit(f"corpus {path} not found (set NEARDUP_CORPORA)")
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        anchor = [sys.executable, "-c", ANCHOR, str(path), out]
        ours = [*_neardup(), "dedup", str(path), "--out", out]
        for cmd in (anchor, ours):
            _time(cmd)
        base, n = _instructions(anchor), _instructions(ours)
    return {
        "corpus": corpus,
        "neardup_instructions": n,
        "stdlib_json_instructions": base,
        "instruction_ratio": round(n / base, 2),
        **_context(load_before, os.getloadavg()),
    }


def _context(before: tuple[float, ...], after: tuple[float, ...]) -> dict[str, object]:
    """When, on which commit and under which load (1-minute averages) a run was made."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": commit,
        "load_1min_before_after": [round(before[0], 2), round(after[0], 2)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="reuters", help=f"{sorted(FILES)}, or a path")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="stage times of one dedup")
    ap.add_argument(
        "--switch-interval",
        type=float,
        default=None,
        help="also time neardup under sys.setswitchinterval(S), interleaved (e.g. 0.0005)",
    )
    ap.add_argument(
        "--instructions", action="store_true", help="instruction counts (valgrind), one run each"
    )
    args = ap.parse_args()
    if args.instructions:
        print(json.dumps(instructions(args.corpus)), flush=True)
        return
    if args.profile:
        print(json.dumps(profile(args.corpus, args.repeat)), flush=True)
        return
    print(json.dumps(measure(args.corpus, args.repeat, args.switch_interval)), flush=True)


if __name__ == "__main__":
    main()
