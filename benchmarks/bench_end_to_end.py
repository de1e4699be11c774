"""``neardup dedup`` end to end against Python's own ``json`` reading and writing the same file.

Both run as subprocesses on the same gzipped JSONL corpus (Reuters-21578 by default), so
interpreter start-up, imports, decompression, parsing and writing count for both. The anchor
reads every record with ``json.loads`` and writes it back with ``json.dumps`` (what any
JSONL-to-JSONL tool must at least do); neardup runs its default, verified dedup. Runs are
interleaved, best of ``--repeat`` each; the ratio is what issue 9 tracks (target <= 2x). CPU
time (user + sys of the child) is reported beside wall time: on a shared machine it moves
much less. The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed)
after one untimed warm-up run each, as an installed package runs (pip compiles the bytecode at
install time); with it set, an editable install recompiles every neardup module per run
(~0.1 s).

    python benchmarks/bench_end_to_end.py                      # ~1 minute
    python benchmarks/bench_end_to_end.py --corpus peoples_daily --repeat 3
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


def measure(corpus: str, repeat: int) -> dict[str, object]:
    path = corpora_dir() / FILES[corpus]
    if not path.exists():
        raise SystemExit(f"corpus {path} not found (set NEARDUP_CORPORA)")
    ours: list[tuple[float, float]] = []
    anchor: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        cmds = (
            [sys.executable, "-c", ANCHOR, str(path), out],
            [
                *_neardup(),
                "dedup",
                str(path),
                "--out",
                out,
            ],
        )
        for cmd in cmds:  # warm-up: bytecode caches, page cache
            _time(cmd)
        for _ in range(repeat):
            anchor.append(_time(cmds[0]))
            ours.append(_time(cmds[1]))
    best, base = min(w for w, _ in ours), min(w for w, _ in anchor)
    cpu, cpu_base = min(c for _, c in ours), min(c for _, c in anchor)
    return {
        "corpus": corpus,
        "neardup_dedup_s": round(best, 2),
        "stdlib_json_read_write_s": round(base, 2),
        "ratio": round(best / base, 2),
        "neardup_cpu_s": round(cpu, 2),
        "stdlib_json_cpu_s": round(cpu_base, 2),
        "cpu_ratio": round(cpu / cpu_base, 2),
        "runs_neardup": [round(w, 2) for w, _ in ours],
        "runs_anchor": [round(w, 2) for w, _ in anchor],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=sorted(FILES), default="reuters")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps(measure(args.corpus, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
