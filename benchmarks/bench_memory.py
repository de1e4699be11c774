"""Peak memory of ``neardup dedup`` against gaoya and rensa MinHash pipelines (issue 24).

Every tool runs as a child process on the same gzipped JSONL file and writes a JSONL file;
peak RSS comes from ``wait4`` (best of ``--repeat`` runs each, interleaved). The anchors are
one-pass pipelines with 128 hashes in 32 bands of 4 over character 4-grams (what neardup's
verifier sketches): read a line with ``json``, query the index, insert the document when
nothing matched, write the record with its decision.

- ``gaoya``: ``MinHashStringIndex(hash_size=32, jaccard_threshold=0.6, num_bands=32,
  band_size=4, analyzer="char", ngram_range=(4, 4), lowercase=True)``;
- ``rensa``: ``RMinHash(num_perm=128)`` over the same 4-grams + ``RMinHashLSH(threshold=0.6,
  num_perm=128, num_bands=32)``.

``--docs N`` also measures peak memory per document: a JSONL file of N documents (Reuters,
20 Newsgroups and People's Daily texts, cycled, every repeat with a few words changed so that
nothing is an exact copy of a repeat, plus 5 % planted near-copies), ``neardup dedup`` on it
and on its first ``N // 10`` documents; per document = (peak(N) - peak(N/10)) / (0.9 N), the
memory that grows with the input, next to peak(N) / N.

``--state N`` (issue 39): where the bytes per document go, in process, on the synthetic stream
of ``bench_scale.py index`` (random fingerprints and 193-value sketches, 5 % planted copies,
random 128-bit exact keys; no fingerprinting, so it isolates what grows with N): bytes per
document of each per-document column, the sketches (anonymous, or in the spill file), the
exact-text map (its dict and its arrays), the candidate index; peak RSS and anonymous vs
file-backed RSS (``/proc/self/status``) less the benchmark's own arrays, and CPU seconds
(``time.process_time``; re-time on a quiet machine).

    python benchmarks/bench_memory.py                    # Reuters, ~30 s
    python benchmarks/bench_memory.py --docs 200000      # + bytes per document, ~2 min
    python benchmarks/bench_memory.py --state 1000000    # state breakdown only, ~1 min
    python benchmarks/bench_memory.py --state 100000000 --dry-run  # disk and memory it needs

The ``--state`` stream is generated chunk by chunk from ``--seed`` (the benchmark holds only
the last 5 chunks it plants copies from: the same stream as before, without its 202 B/doc),
and one JSON line per tenth of it goes to stderr (docs so far, docs/s and CPU µs/doc of the
slice, RSS, peak, anonymous and file-backed RSS, planted copies found so far, load average),
so that a partial run (10^8) still yields data.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from neardup.eval.corpora import corpora_dir

ROOT = Path(__file__).resolve().parents[1]
WIDTH_BYTES = 193  # bytes of a default verifier sketch (bench_scale.WIDTH), spilled to disk
KEY_ROWS = 32 * 0.95  # key table rows a document: 32 bands of the 95 % kept (synthetic stream)

GAOYA = """
import gzip, json, sys
from gaoya.minhash import MinHashStringIndex
index = MinHashStringIndex(hash_size=32, jaccard_threshold=0.6, num_bands=32, band_size=4,
                           analyzer="char", ngram_range=(4, 4), lowercase=True)
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        rec = json.loads(line)
        text = rec.get("text") or ""
        hits = index.query(text) if text else []
        if not hits and text:
            index.insert_document(i, text)
        rec["duplicate_of"] = min(hits) if hits else None
        out.write(json.dumps(rec, ensure_ascii=False) + "\\n")
"""

RENSA = """
import gzip, json, sys
from rensa import RMinHash, RMinHashLSH
lsh = RMinHashLSH(threshold=0.6, num_perm=128, num_bands=32)
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f, open(sys.argv[2], "w") as out:
    for i, line in enumerate(f):
        rec = json.loads(line)
        text = (rec.get("text") or "").lower()
        hits = []
        if text:
            m = RMinHash(num_perm=128, seed=0)
            m.update([text[j : j + 4] for j in range(max(len(text) - 3, 1))])
            hits = lsh.query(m)
            if not hits:
                lsh.insert(i, m)
        rec["duplicate_of"] = min(hits) if hits else None
        out.write(json.dumps(rec, ensure_ascii=False) + "\\n")
"""


def peak(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{cmd[:4]} failed: {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def tools(path: Path, out: str) -> dict[str, list[str]]:
    return {
        "neardup": [sys.executable, "-m", "neardup", "dedup", str(path), "--out", out],
        "gaoya": [sys.executable, "-c", GAOYA, str(path), out],
        "rensa": [sys.executable, "-c", RENSA, str(path), out],
    }


def compare(path: Path, repeat: int) -> dict[str, object]:
    """Peak RSS and wall time of each tool on ``path`` (min over ``repeat`` runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmds = tools(path, os.path.join(tmp, "out.jsonl"))
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
        for cmd in cmds.values():
            peak(cmd)  # warm-up
        for _ in range(repeat):
            for name, cmd in cmds.items():
                runs[name].append(peak(cmd))
    row: dict[str, object] = {"file": path.name}
    for name, rs in runs.items():
        row[f"{name}_rss_MiB"] = round(min(r for _, r in rs), 1)
        row[f"{name}_s"] = round(min(w for w, _ in rs), 2)
    for name in ("gaoya", "rensa"):
        row[f"rss_vs_{name}"] = round(
            float(row["neardup_rss_MiB"]) / float(row[f"{name}_rss_MiB"]),  # type: ignore[arg-type]
            2,
        )
    return row


def build_docs(path: Path, n: int, seed: int = 0) -> None:
    """``n`` documents from three corpora, cycled with edits, 5 % planted near-copies."""
    rng = random.Random(seed)
    texts: list[str] = []
    for rel in (
        "reuters21578/docs.jsonl.gz",
        "20news_bydate/docs.jsonl.gz",
        "peoples_daily_199801/articles.jsonl.gz",
    ):
        with gzip.open(corpora_dir() / rel, "rt", encoding="utf-8") as f:
            texts += [t for t in (json.loads(line).get("text", "") for line in f) if t.strip()]
    rng.shuffle(texts)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        for i in range(n):
            text = texts[i % len(texts)]
            if i >= len(texts) or rng.random() < 0.05:  # a repeat or a planted copy: edit it
                words = text.split(" ")
                for j in rng.sample(range(len(words)), max(1, len(words) // 20)):
                    words[j] = f"w{rng.randrange(10**6)}"
                text = " ".join(words)
            f.write(json.dumps({"id": i, "text": text}, ensure_ascii=False) + "\n")


def per_document(n: int, repeat: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big.jsonl.gz", Path(tmp) / "small.jsonl.gz"
        build_docs(big, n)
        build_docs(small, n // 10)
        out = os.path.join(tmp, "out.jsonl")
        rss = {}
        for name, path in (("small", small), ("big", big)):
            cmd = tools(path, out)["neardup"]
            rss[name] = min(peak(cmd)[1] for _ in range(repeat))
        gaoya = peak(tools(big, out)["gaoya"])
    grow = (rss["big"] - rss["small"]) * 2**20 / (n - n // 10)
    return {
        "docs": n,
        "neardup_peak_MiB": round(rss["big"], 1),
        f"neardup_peak_MiB_at_{n // 10}": round(rss["small"], 1),
        "bytes_per_doc_marginal": round(grow),
        "bytes_per_doc_peak_over_n": round(rss["big"] * 2**20 / n),
        "gaoya_peak_MiB": round(gaoya[1], 1),
        "gaoya_s": round(gaoya[0], 1),
    }


def _proc_status() -> dict[str, int]:
    """Peak and current RSS, anonymous and file-backed (bytes), of this process."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return out


class _Ring:
    """Rows of the last ``rows`` stream positions, indexed by position (``x % rows``): planted
    copies take their originals from the last 4 chunks (``bench_scale._synthetic_chunk``), so
    the stream is generated chunk by chunk without holding it (1.9 GB at 10^7 before)."""

    def __init__(self, rows: int, dtype: Any, width: int = 0) -> None:
        self.rows = rows
        self.a = np.zeros((rows, width) if width else rows, dtype)

    def __getitem__(self, at: Any) -> Any:
        return self.a[at % self.rows]

    def __setitem__(self, at: Any, value: Any) -> None:
        self.a[at % self.rows] = value

    def clear(self, base: int, n: int) -> None:
        self[np.arange(base, base + n)] = 0


def _feed_synthetic(n_total: int, seed: int = 0) -> tuple[Any, dict[str, Any], int]:
    """``Deduplicator()`` fed ``n_total`` synthetic documents (module docs), generated chunk by
    chunk from ``seed`` (the same stream as holding it whole: same generator calls); prints one
    line a tenth of the stream (docs so far, docs/s and CPU of the slice, RSS anonymous and
    file-backed, planted copies found so far). Returns it, what was measured (CPU seconds,
    planted copies found) and the bytes of the benchmark's own arrays."""
    from bench_scale import CHUNK, WIDTH, _plant, _Prepared, _synthetic_chunk
    from neardup.dedup.decisions import DUPLICATE

    rng = np.random.default_rng(seed)
    dd = _Prepared()
    ring = 5 * CHUNK  # the chunk being made and the 4 before it
    fps, sk, is_copy = _Ring(ring, np.uint64), _Ring(ring, np.uint8, WIDTH), _Ring(ring, bool)
    cpu, base, found, planted = time.process_time(), 0, 0, 0
    last = (0, time.perf_counter(), cpu)
    slice_docs = max(CHUNK, n_total // 10)
    while base < n_total:
        n = min(CHUNK, n_total - base)
        is_copy.clear(base, n)
        chunk, copies, orig = _synthetic_chunk(rng, n, base, 0.05, is_copy)  # type: ignore[arg-type]
        _plant(rng, chunk, base, copies, orig, fps, sk, 0.9)  # type: ignore[arg-type]
        hi, lo = rng.integers(0, 2**63, (2, n)).tolist()
        chunk.keys.extend((h << 65) | (x << 1) | 1 for h, x in zip(hi, lo, strict=True))
        assert chunk.sketches is not None
        fps[np.arange(base, base + n)], sk[np.arange(base, base + n)] = chunk.fps, chunk.sketches
        dd._next_chunk = chunk
        d = dd.feed([""] * n)
        found += int(((d.status[copies] == DUPLICATE) & (d.duplicate_of[copies] == orig)).sum())
        planted += int(copies.size)
        base += n
        if base - last[0] >= slice_docs or base == n_total:
            last = _slice_line(base, last, found, planted)
    measured = {
        "cpu_s": time.process_time() - cpu,
        "planted_copies_found": round(found / max(planted, 1), 4),
        "planted_copies": planted,
    }
    return dd, measured, fps.a.nbytes + sk.a.nbytes + is_copy.a.nbytes


def _slice_line(
    base: int, last: tuple[int, float, float], found: int, planted: int
) -> tuple[int, float, float]:
    """Print one slice's line (a partial run still yields data); the next slice's start."""
    wall, cpu, st = time.perf_counter(), time.process_time(), _proc_status()
    docs = base - last[0]
    row = {
        "docs": base,
        "slice_docs_per_s": round(docs / max(wall - last[1], 1e-9)),
        "slice_cpu_us_per_doc": round(1e6 * (cpu - last[2]) / docs, 2),
        "rss_MiB": round(st["VmRSS"] / 2**20, 1),
        "peak_rss_MiB": round(st["VmHWM"] / 2**20, 1),
        "rss_anon_MiB": round(st["RssAnon"] / 2**20, 1),
        "rss_file_MiB": round(st["RssFile"] / 2**20, 1),
        "planted_found_so_far": round(found / max(planted, 1), 4),
        "load": round(os.getloadavg()[0], 1),
    }
    print(json.dumps({"slice": row}), file=sys.stderr, flush=True)
    return base, wall, cpu


def _reset_peak() -> bool:
    """Reset this process's VmHWM to its RSS (Linux ``clear_refs`` 5); False where refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


class _Events:
    """Transient RSS of named events (``--events``): around each call of a traced function the
    peak (VmHWM, reset before it) less the RSS before, and what stays (RSS after less before).
    Nested events fold their peaks into the enclosing ones."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.stack: list[list[int]] = []
        self.peak = 0  # VmHWM is reset around events: the run's peak is kept here

    def _fold(self) -> None:
        hwm = _proc_status()["VmHWM"]
        self.peak = max(self.peak, hwm)
        for frame in self.stack:
            frame[1] = max(frame[1], hwm)

    def trace(self, owner: Any, attr: str, label: Any) -> None:
        """Wrap ``owner.attr``; ``label(args, result)`` names the event and its size (None: not
        recorded, e.g. a ``reserve`` that did not grow)."""
        fn = getattr(owner, attr)

        def traced(*args: Any, **kw: Any) -> Any:
            self._fold()
            before = _proc_status()["VmRSS"]
            self.stack.append([before, before])
            _reset_peak()
            try:
                out = fn(*args, **kw)
            finally:
                self._fold()
                _, top = self.stack.pop()
                after = _proc_status()["VmRSS"]
                _reset_peak()
            named = label(args, out)
            if named is not None:
                self.rows.append(
                    {
                        "event": named[0],
                        "size": named[1],
                        "rss": before,
                        "transient": top - before,
                        "kept": after - before,
                        "peak": top,
                    }
                )
            return out

        setattr(owner, attr, traced)

    def summary(self, n: int) -> dict[str, Any]:
        """Per event kind: count, largest transient and its size, RSS kept, in B/doc of ``n``;
        and the event at the run's peak."""
        kinds: dict[str, dict[str, Any]] = {}
        for r in self.rows:
            k = kinds.setdefault(r["event"], {"count": 0, "max_transient": 0.0, "kept": 0.0})
            k["count"] += 1
            k["kept"] = round(k["kept"] + r["kept"] / n, 1)
            if r["transient"] / n >= k["max_transient"]:
                k["max_transient"], k["at_size"] = round(r["transient"] / n, 1), r["size"]
                k["at_rss_MiB"] = round(r["rss"] / 2**20, 1)
        if os.environ.get("BENCH_EVENTS_DUMP"):  # every event, for a plot
            Path(os.environ["BENCH_EVENTS_DUMP"]).write_text(json.dumps(self.rows))
        top = max(self.rows, key=lambda r: r["peak"], default=None)
        return {"by_kind": kinds, "peak_event": top and {**top, "peak_MiB": top["peak"] / 2**20}}


def _trace_events(ev: _Events) -> None:
    """The events that may make the peak (``--events``)."""
    from neardup._growable import Growable
    from neardup.dedup.dedup_state import DedupState
    from neardup.dedup.exact_map import ExactMap
    from neardup.index.keytable import KeyTable

    def grown(args: Any, out: Any) -> Any:
        g, _need = args
        return ("growable_grow", int(out.nbytes)) if out.nbytes > g._seen else None

    orig = Growable.reserve

    def reserve(self: Any, need: int) -> Any:
        self._seen = self.data.nbytes if self.data.flags.writeable else -1
        return orig(self, need)

    Growable.reserve = reserve  # type: ignore[method-assign]
    ev.trace(Growable, "reserve", grown)
    ev.trace(KeyTable, "_merge", lambda a, out: ("keytable_merge", out.size))
    ev.trace(KeyTable, "add", lambda a, out: ("keytable_add", a[1].size))
    ev.trace(ExactMap, "freeze", lambda a, out: ("exact_freeze", a[0]._live))
    ev.trace(DedupState, "_trim", lambda a, out: ("trim", a[1]))
    ev.trace(DedupState, "_decide_new", lambda a, out: ("chunk", len(a[1].fps)))


def _mallinfo() -> dict[str, int]:
    """glibc's ``mallinfo2`` (arena: heap from brk, hblkhd: mmapped blocks, fordblks: free in
    the heap, kept); empty elsewhere."""
    import ctypes

    class Info(ctypes.Structure):
        names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
        _fields_ = [(f, ctypes.c_size_t) for f in names.split(" ")]

    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return {}
    mallinfo2.restype = Info
    info = mallinfo2()
    return {f: int(getattr(info, f)) for f in ("arena", "hblkhd", "fordblks", "uordblks")}


def state_breakdown(n: int, seed: int = 0, events: bool = False) -> dict[str, object]:
    """Bytes per document of each part of the dedup state after ``n`` synthetic documents
    (``events``: and the transients of the events that may make the peak, :class:`_Events`)."""
    ev = _Events()
    if events:
        _trace_events(ev)
    start = _proc_status()
    dd, measured, own = _feed_synthetic(n, seed)
    st = dd._state
    from neardup.dedup.columns import SCHEMA

    parts = {c.name: st.cols.column(c.name).nbytes for c in SCHEMA}
    parts["columns_used"] = sum(st.cols.column(c.name).view().nbytes for c in SCHEMA)
    spilled = (getattr(st.cols.column(c.name), "file_bytes", 0) for c in SCHEMA)
    parts["columns_spill_file"] = sum(spilled)  # key_hi/lo, similarity, threshold (issue 39)
    ex = st.exact
    parts["sketches_anon"] = st.sketches.nbytes
    parts["sketches_spill_file"] = getattr(st.sketches, "file_bytes", 0)  # 0: before issue 39
    parts["exact_dict"] = sys.getsizeof(ex) + sum(
        sys.getsizeof(k) + sys.getsizeof(v) for k, v in dict.items(ex)
    )
    base = [getattr(ex, name, None) for name in ("_hi", "_lo", "_pos")]  # before issue 39: none
    parts["exact_arrays"] = sum(int(a.nbytes) for a in base if a is not None)
    # the base's buffers keep room to merge in place (branch heap39): allocated, not resident
    parts["exact_room"] = getattr(ex, "nbytes", parts["exact_arrays"]) - parts["exact_arrays"]
    described = st.candidates.describe()
    parts["candidate_index"] = described.get("memory_bytes", 0)
    parts["candidate_slots_file"] = described.get("file_bytes", 0)  # key table slots (issue 39)
    now = _proc_status()
    files = ("sketches_spill_file", "columns_used", "columns_spill_file", "candidate_slots_file")
    anon = sum(v for k, v in parts.items() if k not in files)
    return {
        "docs": n,
        "kept": len(st.candidates),
        "cpu_us_per_doc": round(1e6 * measured.pop("cpu_s") / n, 2),
        **measured,
        "bytes_per_doc": {k: round(v / n, 1) for k, v in parts.items()},
        "in_memory_bytes_per_doc": round(anon / n, 1),
        "peak_rss_bytes_per_doc": round((max(now["VmHWM"], ev.peak) - start["VmRSS"] - own) / n, 1),
        "rss_anon_MiB": round(now["RssAnon"] / 2**20, 1),
        "rss_file_MiB": round(now["RssFile"] / 2**20, 1),
        **_heap_view(),
        "benchmark_arrays_MiB": round(own / 2**20, 1),
        **({"events": ev.summary(n)} if events else {}),
    }


def _heap_view() -> dict[str, object]:
    """glibc's heap (MiB, :func:`_mallinfo`) and RssAnon before and after ``malloc_trim``:
    what the C heap keeps after frees (inside RssAnon)."""
    from neardup._heap import release_heap

    before, anon = _mallinfo(), _proc_status()["RssAnon"]
    release_heap()
    after = _mallinfo()
    mib = {k: round(v / 2**20, 1) for k, v in before.items()}
    return {
        "heap_MiB": mib,
        "heap_free_MiB": mib.get("fordblks", 0.0),  # freed, not given back (in RssAnon)
        "trim_gives_back_MiB": round((anon - _proc_status()["RssAnon"]) / 2**20, 1),
        "heap_free_after_trim_MiB": round(after.get("fordblks", 0) / 2**20, 1),
    }


def dry_run(n: int) -> dict[str, object]:
    """What a ``--state n`` run needs, before starting one: the spill files' disk (sketches 193
    B/doc, exact keys and similarities 32 B/doc, the key table's slots 3 or 4 bytes a row from
    2^24 kept documents, issue 39) against the free space of the spill directory, and memory
    at the last 10^7 run's bytes per document against this machine's."""
    from neardup._spill import _spill_dir

    where = _spill_dir() or tempfile.gettempdir()
    slots = KEY_ROWS * (4 if 0.95 * n >= 2**24 else 3)  # nearly all in spilled pieces
    disk = round(n * (WIDTH_BYTES + 32 + slots))
    free = os.statvfs(where)
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "docs": n,
        "spill_dir": where,
        "spill_disk_GB": round(disk / 1e9, 1),
        "slot_files_GB": round(n * slots / 1e9, 1),
        "spill_dir_free_GB": round(free.f_bavail * free.f_frsize / 1e9, 1),
        "disk_ok": free.f_bavail * free.f_frsize > 1.1 * disk,
        # 156: the 10^7 peak with the key table's slots in spill files (branch mem39d)
        "memory_GB_at_B_per_doc": {b: round(n * b / 1e9, 1) for b in (156, 200, 240)},
        "machine_memory_GB": round(ram / 1e9, 1),
        "slices": f"one line on stderr per {max(n // 10, 16384)} documents",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--docs", type=int, default=0, help="also bytes per document at N docs")
    ap.add_argument("--state", type=int, default=0, help="only the state breakdown at N docs")
    ap.add_argument("--seed", type=int, default=0, help="--state: the synthetic stream's seed")
    ap.add_argument("--dry-run", action="store_true", help="--state: disk and memory it needs")
    ap.add_argument("--events", action="store_true", help="--state: transients by event")
    ap.add_argument(
        "--mmap-threshold",
        type=int,
        default=-1,
        help="--state: glibc's fixed mmap threshold in bytes, as the CLI sets it (default: the "
        "CLI's, neardup._heap.MMAP_THRESHOLD); 0: glibc's dynamic one (the library alone)",
    )
    args = ap.parse_args()
    if args.state:
        if args.mmap_threshold:  # what `neardup dedup` runs with (cli.main)
            from neardup._heap import MMAP_THRESHOLD, fix_mmap_threshold

            fix_mmap_threshold(MMAP_THRESHOLD if args.mmap_threshold < 0 else args.mmap_threshold)
        row = (
            dry_run(args.state)
            if args.dry_run
            else state_breakdown(args.state, args.seed, args.events)
        )
        print(json.dumps(row), flush=True)
        return
    reuters = corpora_dir() / "reuters21578/docs.jsonl.gz"
    print(json.dumps(compare(reuters, args.repeat)), flush=True)
    if args.docs:
        print(json.dumps(per_document(args.docs, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
