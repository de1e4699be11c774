"""The issue-37 structure numbers of the package, measured from the source (ast).

Prints: import cycles (every import counted, :mod:`import_graph`), functions over 60 lines,
``if TYPE_CHECKING:`` blocks declaring attributes inside a class, and the ``Deduplicator``
with its neardup base classes (lines, public names). ``duplicates`` (the pairs of repeated
code) is a separate tool: ``cd src/neardup && duplicates``.

    python tools/structure_report.py        # needs the package importable (PYTHONPATH=src)
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_graph import ROOT, cycles, import_graph

LONG = 60


def long_functions(root: Path = ROOT / "neardup") -> list[tuple[int, str]]:
    """``(lines, where)`` of every function longer than :data:`LONG` lines, longest first."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > LONG:
                    found.append((n, f"{path.relative_to(root)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def type_checking_attribute_blocks(root: Path = ROOT / "neardup") -> list[tuple[int, str]]:
    """``(attributes, where)`` of each ``if TYPE_CHECKING:`` block in a class body that
    declares attributes (state a class reads but another defines)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
                    n = sum(isinstance(s, ast.AnnAssign) for s in stmt.body)
                    if n:
                        found.append((n, f"{path.relative_to(root)}:{stmt.lineno} {node.name}"))
    return found


def deduplicator() -> tuple[int, list[str]]:
    """Lines of ``Deduplicator`` and its neardup base classes, and its public names."""
    from neardup.dedup import Deduplicator

    mro = [c for c in Deduplicator.__mro__ if c.__module__.startswith("neardup")]
    lines = sum(len(inspect.getsourcelines(c)[0]) for c in mro)
    return lines, sorted(n for n in dir(Deduplicator) if not n.startswith("_"))


def main() -> None:
    graph = import_graph()
    print(f"import cycles: {len(cycles(graph))} ({len(graph)} modules, every import counted)")
    longs = long_functions()
    print(f"functions over {LONG} lines: {len(longs)}")
    for n, where in longs:
        print(f"  {n:4d}  {where}")
    blocks = type_checking_attribute_blocks()
    print(f"TYPE_CHECKING attribute blocks: {len(blocks)}")
    for n, where in blocks:
        print(f"  {n:4d} attributes  {where}")
    lines, names = deduplicator()
    print(f"Deduplicator with its neardup bases: {lines} lines, {len(names)} public names")


if __name__ == "__main__":
    main()
