"""The package's shape: one error root, no import cycles (issue 37)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

import neardup
from neardup.errors import NeardupError

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(neardup.__path__, "neardup.")]
    return [importlib.import_module(name) for name in ["neardup", *names]]


def test_every_exception_class_derives_from_neardup_error() -> None:
    defined = {
        f"{obj.__module__}.{obj.__qualname__}": obj
        for module in _modules()
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, BaseException)
        and obj.__module__.startswith("neardup")
    }
    assert len(defined) >= 10  # the walk found the package's errors
    outside = sorted(name for name, cls in defined.items() if not issubclass(cls, NeardupError))
    assert outside == []


def test_errors_are_exported_from_the_package() -> None:
    import neardup.errors as errors

    for name in errors.__all__:
        assert getattr(neardup, name) is getattr(errors, name)
        assert name in neardup.__all__


# the layers below dedup (nobody else's rules): their checks raise the error kinds, not bare
# ValueError (still a ValueError: BadInputError and the others subclass it)
LOWER_LAYERS = ["features", "index", "fingerprint.py", "verify.py", "hashing.py", "_params.py"]


def test_the_lower_layers_raise_no_bare_value_error() -> None:
    src = ROOT / "src" / "neardup"
    files = [p for name in LOWER_LAYERS for p in sorted((src / name).glob("**/*.py"))]
    files += [src / name for name in LOWER_LAYERS if name.endswith(".py")]
    found = [
        f"{path.relative_to(src)}:{node.lineno}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and isinstance(node.exc.func, ast.Name)
        and node.exc.func.id == "ValueError"
    ]
    assert len(files) > 20
    assert found == []


def _import_graph_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools/import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = module
    spec.loader.exec_module(module)
    return module


def test_no_import_cycles_counting_type_checking_and_lazy_imports() -> None:
    tool = _import_graph_tool()
    graph = tool.import_graph(ROOT / "src", "neardup")
    assert len(graph) > 50 and "neardup.index.storage" in graph["neardup.index.hamming_index"]
    assert tool.cycles(graph) == []


# the data flow as layers (README's layout): each imports only from the layers before it
LAYERS = [
    {"errors"},
    {"_dirformat", "_atomic", "_atomic_remote", "_fs", "_persist", "_params", "_extras"}
    | {"_threads", "_growable", "_spill", "_heap", "data", "_arrays"},
    {"_backend", "_numba", "_native", "_overlap", "hashing", "features", "fingerprint", "verify"},
    {"index"},
    {"io"},
    {"dedup", "overlap"},  # the products
    {"cli", "server", "spark", "eval", "integrations", "__main__"},  # the surfaces
]


def test_lower_layers_never_import_upper_ones() -> None:
    graph = _import_graph_tool().import_graph(ROOT / "src", "neardup")
    rank = {name: i for i, names in enumerate(LAYERS) for name in names}

    def layer(module: str) -> int:
        parts = module.split(".")
        return rank[parts[1]] if len(parts) > 1 else len(LAYERS) - 1  # neardup: a surface

    assert all(len(m.split(".")) == 1 or m.split(".")[1] in rank for m in graph)
    upward = sorted(f"{a} -> {b}" for a in graph for b in graph[a] if layer(b) > layer(a))
    # the one known exception (issue 41's remote writer borrows io's process-named temporary
    # folders); to remove: those helpers move below io, beside the atomic writer
    assert upward == ["neardup._atomic_remote -> neardup.io.writers"]
    assert graph["neardup.errors"] == set()


def test_the_cycle_finder_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n")
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n"
    (pkg / "b.py").write_text(typed)
    (pkg / "c.py").write_text("from . import a\nfrom pkg import _ext\n")
    (pkg / "_ext.pyi").write_text("def f() -> None: ...\n")  # a C extension's stub
    tool = _import_graph_tool()
    graph = tool.import_graph(tmp_path, "pkg")
    assert graph["pkg.c"] == {"pkg.a", "pkg._ext"}
    assert tool.cycles(graph) == [["pkg.a", "pkg.b"]]
