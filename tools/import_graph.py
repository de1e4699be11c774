"""The package's import graph from the source (ast), and its cycles.

Every import counts: module level, inside ``if TYPE_CHECKING:`` and inside functions (a lazy
import is still a dependency, and a type-checking one still ties the two modules' designs).
``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.

    python tools/import_graph.py            # prints each cycle; exit 1 when there is one
    python tools/import_graph.py --edges    # also every edge, one ``a -> b`` a line

``tests/test_structure.py`` asserts there is none.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"


def module_names(root: Path, package: str) -> dict[str, Path]:
    """``{dotted name: file}`` for every ``.py`` file of ``package`` under ``root``, and every
    ``.pyi`` without one (a C extension's stub: ``from pkg import _ext`` names the extension,
    not the package)."""
    out: dict[str, Path] = {}
    files = sorted((root / package).rglob("*.py"))
    files += [
        p for p in sorted((root / package).rglob("*.pyi")) if p.with_suffix(".py") not in files
    ]
    for path in files:
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(node: ast.AST, name: str, is_package: bool, modules: dict[str, Path]) -> set[str]:
    """The modules of the package one import statement of module ``name`` refers to."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        here = name.split(".") if is_package else name.split(".")[:-1]
        here = here[: len(here) - (node.level - 1)]
        base = ".".join([*here, base] if base else here)
    # ``from pkg import mod`` depends on the module; ``from pkg import obj`` on the package
    out = {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return out & modules.keys()


def import_graph(root: Path = ROOT, package: str = "neardup") -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, counting every kind of import.

    >>> "neardup._atomic" in import_graph()["neardup._persist"]
    True
    """
    modules = module_names(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            edges |= _targets(node, name, is_package, modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted.

    >>> cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    >>> cycles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", action="store_true", help="print every edge too")
    args = ap.parse_args()
    graph = import_graph()
    if args.edges:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print(f"{a} -> {b}")
    found = cycles(graph)
    for component in found:
        print("cycle:", " ".join(component))
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} edges, {len(found)} cycles")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    main()
