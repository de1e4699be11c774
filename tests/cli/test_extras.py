"""Optional dependencies: the core runs without them; a missing extra is named in one line.

Each case runs in a fresh interpreter where the library is made unimportable
(``sys.modules[name] = None``, which is what an uninstalled package looks like to ``import``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(
    code: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=None if env is None else {**os.environ, **env},
    )


def _neardup_without(
    blocked: list[str], *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        f"for name in {blocked!r}: sys.modules[name] = None\n"
        "from neardup.cli import main\n"
        "sys.argv = ['neardup', *sys.argv[1:]]\n"
        "main()\n"
    )
    return _run(code, *args, env=env)


def test_core_runs_without_scipy_and_matplotlib() -> None:
    # (numba itself imports scipy when it is there, to check its version: hence a block,
    # not a look at sys.modules)
    code = (
        "import sys\n"
        "sys.modules['scipy'] = sys.modules['matplotlib'] = None\n"
        "import neardup, neardup.cli.dedup, neardup.cli.fingerprint, neardup.cli.index\n"
        "d = neardup.Deduplicator().run(['a b c d e', 'a b c d e', 'x y z w v'])\n"
        "labels = neardup.dedup.connected_components(3, [0], [1])\n"
        "print(d.statuses, labels.tolist())\n"
    )
    res = _run(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "['unique', 'exact_duplicate', 'unique'] [0, 0, 1]"


def test_report_without_matplotlib_fails_early_naming_the_extra(tmp_path: Path) -> None:
    sample = ROOT / "examples" / "sample_news.jsonl"
    out = tmp_path / "out.jsonl"
    args = [str(sample), "--out", str(out), "--report", str(tmp_path / "rep")]
    res = _neardup_without(["matplotlib"], "dedup", *args)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "neardup: error: --report needs matplotlib: pip install 'neardup[report]'"
    ]
    assert not out.exists()  # failed before doing any work
    ok = _neardup_without(["matplotlib"], "dedup", str(sample), "--out", str(out))
    assert ok.returncode == 0 and out.exists()  # without --report nothing needs it


def test_eval_without_scipy_names_the_extra() -> None:
    res = _neardup_without(["scipy"], "eval", "--corpus", "reuters")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "neardup: error: the accuracy harness (neardup eval) needs scipy: "
        "pip install 'neardup[eval]'"
    ]
    listing = _neardup_without(["scipy"], "--help")
    assert listing.returncode == 0 and "eval" in listing.stdout


NO_KERNELS = (
    "neardup's C extension (neardup._native) is not built and its numba fallback is not "
    "installed: install a C compiler and reinstall neardup, or pip install 'neardup[numba]'"
)


def test_without_the_extension_and_numba_the_error_names_the_fix(tmp_path: Path) -> None:
    # NEARDUP_KERNELS=numba is what an install whose C extension was not built looks like
    no_c = {"NEARDUP_KERNELS": "numba"}
    out = tmp_path / "out.jsonl"
    sample = str(ROOT / "examples" / "sample_news.jsonl")
    res = _neardup_without(["numba"], "dedup", sample, "--out", str(out), env=no_c)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [f"neardup: error: {NO_KERNELS}"]
    assert not out.exists()
    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"
        "import neardup\n"
        "try:\n"
        "    neardup.Fingerprinter().fingerprint('a b c d')\n"
        "except neardup.NeardupError as e:\n"
        "    print(type(e).__name__, isinstance(e, ImportError), e)\n"
    )
    lib = _run(code, env=no_c)
    assert lib.returncode == 0, lib.stderr
    assert lib.stdout.strip() == f"MissingExtraError True {NO_KERNELS}"


def test_core_runs_without_numba() -> None:
    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"
        "import neardup, neardup.cli.dedup, neardup.cli.overlap, neardup.overlap\n"
        "d = neardup.Deduplicator().run(['a b c d e', 'a b c d e', 'x y z w v'])\n"
        "print(d.statuses)\n"
    )
    res = _run(code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "['unique', 'exact_duplicate', 'unique']"
