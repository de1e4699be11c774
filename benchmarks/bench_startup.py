"""Start-up as a new user meets it: fresh venv, non-editable ``pip install .``, first command.

cold: a new virtualenv, ``pip install .`` of this source tree (not editable: no caches from the
work tree), then the first ``neardup dedup examples/sample_news.jsonl`` is timed (wall, whole
process). warm: the same command again (best of ``--repeat``). imports: ``python -X
importtime -c "import neardup.cli"`` and ``import neardup``, best of 3. The install itself is
timed but not part of the target. With ``--kernels numba`` the first run uses the numba
fallback (``NEARDUP_KERNELS=numba``, installed as ``.[numba]``: numba is an extra), i.e. what a
machine without a C compiler pays.

    python benchmarks/bench_startup.py                 # ~3-6 minutes (mostly pip install)
    python benchmarks/bench_startup.py --venv /tmp/v   # reuse an existing venv: skips install
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


def _wall(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    return time.perf_counter() - t0


def install(venv: Path, extras: str = "") -> float:
    """Fresh venv + non-editable install of this tree; returns the seconds it took."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{ROOT}{extras}"]
    subprocess.run(pip, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def import_seconds(python: str, module: str, cwd: str) -> float:
    """Best of 3: cumulative import time of ``module`` from ``-X importtime``."""
    best = float("inf")
    for _ in range(3):
        proc = subprocess.run(
            [python, "-X", "importtime", "-c", f"import {module}"],
            check=True,
            capture_output=True,
            text=True,
            cwd=cwd,
        )
        last = [ln for ln in proc.stderr.splitlines() if ln.rstrip().endswith(f"| {module}")]
        best = min(best, int(last[-1].split("|")[1]) / 1e6)
    return best


def measure(venv: Path, repeat: int, kernels: str) -> dict[str, object]:
    exe = str(venv / "bin" / "neardup")
    python = str(venv / "bin" / "python")
    env = {**os.environ, "NEARDUP_KERNELS": kernels}
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory() as tmp:  # run outside the source tree: the installed copy
        cmd = [exe, "dedup", str(SAMPLE), "--out", os.path.join(tmp, "out.jsonl")]
        cold = _wall(cmd, env, tmp)
        warm = [_wall(cmd, env, tmp) for _ in range(repeat)]
        where = subprocess.run(
            [python, "-c", "import neardup._backend as b; print(b.backend())"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        ).stdout.strip()
        return {
            "kernels": where,
            "cold_first_dedup_s": round(cold, 2),
            "warm_dedup_s": round(min(warm), 2),
            "warm_runs": [round(w, 2) for w in warm],
            "import_neardup_s": round(import_seconds(python, "neardup", tmp), 3),
            "import_neardup_cli_s": round(import_seconds(python, "neardup.cli", tmp), 3),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--venv", type=Path, help="existing venv with neardup installed")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kernels", choices=["native", "numba"], default="native")
    args = ap.parse_args()
    row: dict[str, object] = {}
    if args.venv is None:
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(tmp) / "venv"
            extras = "[numba]" if args.kernels == "numba" else ""
            row["install_s"] = round(install(venv, extras), 1)
            row.update(measure(venv, args.repeat, args.kernels))
    else:
        row.update(measure(args.venv, args.repeat, args.kernels))
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
