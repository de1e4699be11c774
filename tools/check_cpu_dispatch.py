"""Check that the C extension runs correctly on x86-64 CPUs older than the build machine.

``neardup._native`` is one build for every x86-64 CPU: its hot loops have GCC
``target_clones`` (AVX-512 / AVX2 / POPCNT / baseline) picked by an ifunc resolver when the
module loads. This script runs one workload that reaches every cloned kernel (fingerprints,
the verifier's MinHash sketch, index search and self-join) on the host, then again under
``qemu-x86_64`` emulating older CPUs, and compares digests of the results. QEMU's TCG does
not implement AVX-512 at all, so a resolver that picked an AVX-512 clone on a CPU without it
would die with SIGILL here instead of passing; a wrong-but-running clone would change the
digest.

    apt-get install qemu-user            # Debian/Ubuntu
    python tools/check_cpu_dispatch.py   # ~1 minute; exit 1 on any difference

Models: ``Nehalem`` (x86-64-v2: POPCNT, no AVX) and ``Haswell`` (x86-64-v3: AVX2, no
AVX-512). ``qemu64`` (plain x86-64) is not used: numpy 2.4's own baseline is x86-64-v2, so
``import numpy`` itself dies there. Under emulation numpy is kept on its baseline code
(``NPY_DISABLE_CPU_FEATURES=X86_V3,X86_V4``): QEMU 7.2's young AVX2 emulation miscomputes
numpy's AVX2 sort/select paths (151 of 20 000 join pairs lost; the same numpy AVX2 code on
real hardware, host with ``X86_V4`` disabled, is exact). That setting does not touch
neardup's resolver, which reads CPUID itself. Without ``qemu-x86_64`` it exits 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"
MODELS = ("Nehalem", "Haswell")


def workload() -> dict[str, str]:
    """Digests of results computed by every cloned kernel, plus the backend in use."""
    import numpy as np

    from neardup import Fingerprinter, HammingIndex, MinHashVerifier, all_pairs
    from neardup._backend import backend

    texts = [json.loads(line)["text"] for line in SAMPLE.read_text("utf-8").splitlines()]
    texts = [f"{t} {i}" for i in range(8) for t in texts]  # a few hundred documents
    out: dict[str, str] = {"backend": backend()}

    def digest(*arrays: object) -> str:
        h = hashlib.sha256()
        for a in arrays:
            h.update(np.ascontiguousarray(a).tobytes())
        return h.hexdigest()[:16]

    fps = np.asarray(Fingerprinter().fingerprint_many(texts), dtype=np.uint64)
    out["fingerprints"] = digest(fps)
    out["sketch"] = digest(MinHashVerifier().sketch_many(texts))
    rng = np.random.default_rng(7)
    # 2 x 40,000: above the 65,536 rows from which all_pairs groups with the C bucket sort
    base = rng.integers(0, 2**63, size=40_000, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=40_000).astype(np.uint64)
    both = np.concatenate([base, base ^ flips])
    index = HammingIndex(k=3)
    index.add(np.arange(both.size), both)
    m = index.search(both[:2000], k=3)
    out["search"] = digest(m.query, m.id, m.distance)
    p = all_pairs(both, k=3)
    out["all_pairs"] = digest(p.i, p.j, p.distance)
    return out


def run(prefix: list[str]) -> dict[str, str]:
    cmd = [*prefix, sys.executable, __file__, "--worker"]
    env = dict(os.environ)
    if prefix:  # numpy on its baseline under QEMU (see the module docstring)
        env["NPY_DISABLE_CPU_FEATURES"] = "X86_V3,X86_V4"
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/", env=env)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        return {"error": f"exit {proc.returncode}: {' | '.join(tail)}"}
    result: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(workload()))
        return 0
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        print("qemu-x86_64 not found: apt-get install qemu-user", file=sys.stderr)
        return 2
    host = run([])
    print(json.dumps({"cpu": "host", **host}))
    if host.get("backend") != "native":
        print("the C extension is not built here: nothing to check", file=sys.stderr)
        return 2
    bad = 0
    for model in args.models:
        got = run([qemu, "-cpu", model])
        same = got == host
        bad += not same
        print(json.dumps({"cpu": model, "same_as_host": same, **got}), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
