"""Check the C extension's packaging: sdist contents, install from it, install with no compiler.

1. ``python -m build --sdist``: the tarball must hold every ``_csrc`` source and header that
   ``setup.py`` compiles.
2. A fresh virtualenv, ``pip install <sdist>`` (not editable, outside the source tree): the
   extension must be built (``neardup._backend.backend() == "native"``).
   numba must not be installed: it is the ``neardup[numba]`` extra, not a core dependency;
   the extensions' typed stubs (``_native.pyi``, ``_overlap.pyi``) must be installed.
3. The same package reinstalled with ``CC=false`` (a compiler that always fails): the install
   must still succeed and the backend must be ``numba``; without numba ``neardup dedup`` must
   fail in one line naming ``pip install 'neardup[numba]'``; after installing numba it must
   write the same decisions as the C build.

    python tools/check_install.py           # ~3-6 minutes (downloads into a fresh venv)
    python tools/check_install.py --keep    # leave the venv in /tmp for inspection

Needs ``build`` (``pip install build``) and network access to the package index. Exit 1 on the
first failed check, with a line saying which.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "sample_news.jsonl"


def sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return proc  # type: ignore[no-any-return]


def expected_sources() -> set[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    names: list[str] = []
    lists = ("SOURCES", "HEADERS", "OVERLAP_SOURCES", "OVERLAP_HEADERS")
    for node in tree.body:  # literal lists of file names (one line or several)
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) in lists:
            names += ast.literal_eval(node.value)
    return {f"src/neardup/_csrc/{n}" for n in names}


def backend(venv: Path, env: dict[str, str]) -> str:
    code = "import neardup._backend as b; print(b.backend())"
    return sh([str(venv / "bin/python"), "-c", code], env=env, cwd="/").stdout.strip()


def dedup(venv: Path, env: dict[str, str], out: Path) -> str:
    sh([str(venv / "bin/neardup"), "dedup", str(SAMPLE), "--out", str(out)], env=env, cwd="/")
    return out.read_text()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="neardup-install-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NEARDUP_KERNELS")}
    sh([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp / "dist"), str(ROOT)])
    sdist = next((tmp / "dist").glob("neardup-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    missing = expected_sources() - members
    if missing:
        raise SystemExit(f"FAILED: the sdist lacks {sorted(missing)} (MANIFEST.in)")
    print(f"ok  sdist {sdist.name} holds all {len(expected_sources())} C sources and headers")

    venv = tmp / "venv"
    sh([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin/python"), "-m", "pip", "install", "-q"]
    sh([*pip, str(sdist)], env=env, cwd="/")
    if (got := backend(venv, env)) != "native":
        raise SystemExit(f"FAILED: install from the sdist gave backend {got!r}, not 'native'")
    native_out = dedup(venv, env, tmp / "native.jsonl")
    print("ok  pip install <sdist> built the C extension (backend native)")
    has_numba = [str(venv / "bin/python"), "-c", "import numba"]
    if subprocess.run(has_numba, capture_output=True, env=env, cwd="/").returncode == 0:
        raise SystemExit("FAILED: a plain install pulled numba (it belongs in neardup[numba])")
    print("ok  a plain install has no numba")
    stubs = "import neardup, pathlib; p = pathlib.Path(neardup.__file__).parent; "
    stubs += "print(all((p / f).is_file() for f in ('_native.pyi', '_overlap.pyi', 'py.typed')))"
    got = sh([str(venv / "bin/python"), "-c", stubs], env=env, cwd="/").stdout.strip()
    if got != "True":
        raise SystemExit("FAILED: the install lacks the extensions' typed stubs (package data)")
    print("ok  the install ships _native.pyi, _overlap.pyi and py.typed")

    no_cc = {**env, "CC": "false", "NEARDUP_REQUIRE_NATIVE": "0"}
    # -q -vv nets one -v: pip then shows setup.py's warning (it hides build output otherwise)
    reinstall = [*pip, "--force-reinstall", "--no-deps", "--no-cache-dir", "-vv", str(sdist)]
    proc = sh(reinstall, env=no_cc, cwd="/")
    if (got := backend(venv, env)) != "numba":
        raise SystemExit(f"FAILED: with CC=false the backend is {got!r}, not 'numba'")
    warned = "C extension was not built" in proc.stderr + proc.stdout
    cmd = [str(venv / "bin/neardup"), "dedup", str(SAMPLE), "--out", str(tmp / "none.jsonl")]
    bare = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if bare.returncode != 2 or "pip install 'neardup[numba]'" not in bare.stderr:
        raise SystemExit(f"FAILED: no C and no numba should name the fix, got {bare.stderr!r}")
    print("ok  CC=false without numba: neardup dedup names pip install 'neardup[numba]'")
    sh([*pip, "numba>=0.59"], env=env, cwd="/")
    if dedup(venv, env, tmp / "numba.jsonl") != native_out:
        raise SystemExit("FAILED: the numba fallback wrote other decisions than the C build")
    print(f"ok  CC=false: install succeeded (warning shown: {warned}), numba fallback, same output")
    if args.keep:
        print(f"kept {tmp}")
    else:
        sh(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
