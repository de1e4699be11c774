"""``neardup dedup`` end to end against Python's own ``json`` reading and writing the same file.

Both run as subprocesses on the same gzipped JSONL corpus (Reuters-21578 by default), so
interpreter start-up, imports, decompression, parsing and writing count for both. The anchor
reads every record with ``json.loads`` and writes it back with ``json.dumps`` (what any
JSONL-to-JSONL tool must at least do); neardup runs its default, verified dedup. Runs are
interleaved, best of ``--repeat`` each; the ratio is what issue 9 tracks (target <= 2x).

    python benchmarks/bench_end_to_end.py                      # ~1 minute
    python benchmarks/bench_end_to_end.py --corpus peoples_daily --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
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


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def measure(corpus: str, repeat: int) -> dict[str, object]:
    path = corpora_dir() / FILES[corpus]
    if not path.exists():
        raise SystemExit(f"corpus {path} not found (set NEARDUP_CORPORA)")
    ours: list[float] = []
    anchor: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.jsonl")
        for _ in range(repeat):
            anchor.append(_time([sys.executable, "-c", ANCHOR, str(path), out]))
            ours.append(_time([*_neardup(), "dedup", str(path), "--out", out]))
    best, base = min(ours), min(anchor)
    return {
        "corpus": corpus,
        "neardup_dedup_s": round(best, 2),
        "stdlib_json_read_write_s": round(base, 2),
        "ratio": round(best / base, 2),
        "runs_neardup": [round(x, 2) for x in ours],
        "runs_anchor": [round(x, 2) for x in anchor],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=sorted(FILES), default="reuters")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps(measure(args.corpus, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
