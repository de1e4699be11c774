"""The typed stubs of the C extensions (``_native.pyi``, ``_overlap.pyi``) match them.

``mypy.stubtest`` checks every name each extension exports against its stub (and back);
the numba fallback must take the same positional arguments as the stub says for the C
kernel of the same name.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def test_stubs_list_what_the_extensions_export() -> None:
    pytest.importorskip("neardup._native")
    pytest.importorskip("neardup._overlap")
    pytest.importorskip("mypy.stubtest")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    res = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "neardup._native", "neardup._overlap"],
        capture_output=True,
        text=True,
        cwd=SRC,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def _stub_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@pytest.mark.parametrize("name", ["_native", "_overlap"])
def test_each_stub_names_exactly_the_extensions_functions(name: str) -> None:
    module = pytest.importorskip(f"neardup.{name}")
    exported = {n for n in dir(module) if not n.startswith("_")}
    assert _stub_names(SRC / "neardup" / f"{name}.pyi") == exported


def _stub_arity(path: Path) -> dict[str, tuple[int, int]]:
    """``{function: (required, total)}`` positional parameters of a stub's functions."""
    out = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            args = [*node.args.posonlyargs, *node.args.args]
            out[node.name] = (len(args) - len(node.args.defaults), len(args))
    return out


def test_the_numba_fallback_takes_the_stubs_arguments() -> None:
    pytest.importorskip("numba")
    stub = _stub_arity(SRC / "neardup" / "_native.pyi")
    checked = 0
    for area in ("features", "hashing", "index", "keys", "verify"):
        module = importlib.import_module(f"neardup._numba.{area}")
        for name, (required, total) in stub.items():
            func = getattr(module, name, None)
            if func is None:
                continue
            params = inspect.signature(getattr(func, "py_func", func)).parameters.values()
            if any(p.kind is p.VAR_POSITIONAL for p in params):
                continue  # scatter_top's outputs: *out
            need = sum(p.default is p.empty for p in params)
            assert (need, len(params)) == (required, total), name
            checked += 1
    assert checked >= 24  # every kernel but the four C-only ones and scatter_top
