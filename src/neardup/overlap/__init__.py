"""Partial copies: passages shared between documents, with spans into the texts as read.

>>> from neardup.overlap import OverlapFinder
>>> f = OverlapFinder(min_length=5)
>>> _ = f.add("one two three four five six seven eight nine ten eleven twelve")
>>> found = f.query("so: one two three four five six seven eight nine ten")
>>> [(p.span, p.source_span) for p in found]
[((4, 52), (0, 48))]
"""

from __future__ import annotations

from neardup.overlap.finder import OverlapFinder, Passage
from neardup.overlap.index import SeedBudgetError
from neardup.overlap.persist import ReferenceConfigError, ReferenceFormatError

__all__ = [
    "OverlapFinder",
    "Passage",
    "ReferenceConfigError",
    "ReferenceFormatError",
    "SeedBudgetError",
]
