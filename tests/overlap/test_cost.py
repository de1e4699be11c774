"""What `neardup overlap` pays for besides finding passages: the start-up of the process is
part of its wall time against `neardup dedup` (issue 36's cost target), so it imports no
module it does not run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

_RUN = """
import runpy, sys
sys.argv = ["neardup", "overlap", sys.argv[1], "--out", sys.argv[2]]
try:
    runpy.run_module("neardup", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
print(sorted(m for m in sys.modules if m == "neardup.dedup" or m.startswith("neardup.dedup.")))
"""


def test_the_overlap_command_imports_no_dedup_engine(tmp_path: Path) -> None:
    """`neardup overlap` runs without importing :mod:`neardup.dedup` (~0.1 s of start-up: it
    came in through the Spark options' module, for a type hint and a dedup summary line)."""
    src = tmp_path / "docs.jsonl"
    text = "the council approved the new budget for schools, roads and hospitals on Monday"
    rows = [{"id": str(i), "text": f"item {i}: {text}"} for i in range(3)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(src), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert out.read_text().count("\n") == 2  # the run found the copies
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _refilled_counted(query: str, source: str) -> bool:
    """The figures rule counting every passage's figures (its form before the shortcuts)."""
    from collections import Counter

    from neardup.overlap.templates import _figures, _inside, _refilled

    mine, theirs = Counter(_figures(query)), Counter(_figures(source))
    ours, others = mine - theirs, theirs - mine
    most = max(mine.total(), theirs.total())
    changed = min(
        sum(
            k for n, k in ours.items() if not any(_inside(n, m) for m in others if len(m) > len(n))
        ),
        sum(
            k for m, k in others.items() if not any(_inside(m, n) for n in ours if len(n) > len(m))
        ),
    )
    return _refilled(changed, most)


_WORDS = ["rose", "to", "in", "March", "May", "Monday", "pct", "１２", "3.5", "1,250", "5-1/8"]


@given(
    query=st.lists(st.one_of(st.sampled_from(_WORDS), st.integers(0, 999).map(str)), max_size=12),
    source=st.lists(st.one_of(st.sampled_from(_WORDS), st.integers(0, 999).map(str)), max_size=12),
)
@settings(max_examples=400, deadline=None)
def test_the_figures_rule_shortcuts_answer_as_the_full_count(
    query: list[str], source: list[str]
) -> None:
    """``_figures_refilled`` stops early where too few figures could have changed (the query
    side's alone, then both sides' counts): the same answer as counting them all."""
    from neardup.overlap.templates import _figures_refilled

    q, s = " ".join(query), " ".join(source)
    assert _figures_refilled(q, s) == _refilled_counted(q, s)


_ASCII_TEXT = st.text(alphabet="0123456789.,/-_ aZ\t\n#(January", max_size=60)


@given(text=_ASCII_TEXT)
@settings(max_examples=400, deadline=None)
def test_figures_and_numbers_of_an_ascii_text_are_the_patterns_matches(text: str) -> None:
    """An ASCII text's figures and numbers are found on its runs of figure (digit) characters
    alone: the same as the patterns' matches over the whole text."""
    from neardup.overlap.templates import (
        _FIGURE_DIGITS,
        _FIGURE_NAME,
        _NUMBER,
        _figures,
        _number_list,
    )

    assert _figures(text) == _FIGURE_DIGITS.findall(text) + _FIGURE_NAME.findall(text)
    assert _number_list(text) == _NUMBER.findall(text)


@given(text=st.text(alphabet="0123456789aZb_ #,.-(\t", max_size=40))
@settings(max_examples=400, deadline=None)
def test_the_frame_of_an_ascii_text_is_the_patterns_frame(text: str) -> None:
    """``_frame`` of an ASCII text by one translation (letters lowered, a digit run one "#"):
    the same as the patterns' substitutions and ``casefold``."""
    from neardup.overlap.templates import _NOT_WORD, _NUMBER, _frame

    assert _frame(text) == _NOT_WORD.sub("", _NUMBER.sub("#", text).casefold())
