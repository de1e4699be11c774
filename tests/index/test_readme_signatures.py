"""README's HammingIndex verbs show their real arguments (issue 38: ``add`` was listed without
its ``(ids, fingerprints)``, and ``add(fps)`` is the first thing a datasketch user tries)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from neardup import HammingIndex

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_hamming_index_verbs_with_their_required_arguments() -> None:
    text = " ".join(README.read_text("utf-8").split())
    sentence = text[text.index("`neardup.HammingIndex(k=3)` stores them") :][:300]
    listed = dict(re.findall(r"`(\w+)\(([\w, ]*)\)`", sentence))
    for verb in ("add", "search", "query"):
        assert verb in listed, f"README lists HammingIndex.{verb} without its arguments"
        params = inspect.signature(getattr(HammingIndex, verb)).parameters.values()
        required = [p.name for p in params if p.name != "self" and p.default is p.empty]
        assert [a.strip() for a in listed[verb].split(",")] == required
