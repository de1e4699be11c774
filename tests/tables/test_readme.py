"""The README's "Tables, datasets and datatrove" examples run as doctests."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_table_examples_run() -> None:
    pytest.importorskip("polars")
    pytest.importorskip("datasets")
    text = README.read_text("utf-8")
    start = text.index("## Tables, datasets and datatrove")
    section = text[start : text.index("\n## ", start + 1)]
    # a code fence ends an example's expected output
    section = "\n".join("" if line.startswith("```") else line for line in section.splitlines())
    parser = doctest.DocTestParser()
    test = parser.get_doctest(section, {}, "README tables", str(README), 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
