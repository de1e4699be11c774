"""neardup: near-duplicate text detection at scale with SimHash.

Data flow: text -> features -> fingerprint -> index -> dedup -> surfaces (the CLI, the HTTP
service, the Spark engine, explain and eval), and text -> passages -> overlap for partial copies
(:mod:`neardup.overlap`). Every error neardup raises on purpose is a :class:`NeardupError`
(:mod:`neardup.errors`).
Names are imported on first use, so ``import neardup`` (and ``neardup --help``) stay fast.

>>> import neardup
>>> fp = neardup.Fingerprinter()
>>> neardup.hamming(fp.fingerprint("a b c d"), fp.fingerprint("a b c d")) == 0
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Decision": "neardup.dedup",
    "Decisions": "neardup.dedup",
    "Deduplicator": "neardup.dedup",
    "dedup_batch": "neardup.dedup",
    "HammingIndex": "neardup.index",
    "IndexFormatError": "neardup.index",
    "MinHashVerifier": "neardup.verify",
    "duplicate_groups": "neardup.index",
    "Matches": "neardup.index",
    "Pairs": "neardup.index",
    "TableDesign": "neardup.index",
    "Verifier": "neardup.dedup",
    "all_pairs": "neardup.index",
    "EmptyTextError": "neardup.fingerprint",
    "Fingerprinter": "neardup.fingerprint",
    "hamming": "neardup.fingerprint",
    "IdfTable": "neardup.features.idf",
    "normalize_text": "neardup.features.normalize",
    "BadInputError": "neardup.errors",
    "ConfigMismatchError": "neardup.errors",
    "DamagedFileError": "neardup.errors",
    "NeardupError": "neardup.errors",
    "DedupBatches": "neardup.integrations.tables",
    "dedup_table": "neardup.integrations.tables",
    "overlap_table": "neardup.integrations.tables",
}

if TYPE_CHECKING:
    from neardup.dedup import Decision, Decisions, Deduplicator, Verifier, dedup_batch
    from neardup.errors import BadInputError, ConfigMismatchError, DamagedFileError, NeardupError
    from neardup.features.idf import IdfTable
    from neardup.features.normalize import normalize_text
    from neardup.fingerprint import EmptyTextError, Fingerprinter, hamming
    from neardup.index import (
        HammingIndex,
        IndexFormatError,
        Matches,
        Pairs,
        TableDesign,
        all_pairs,
        duplicate_groups,
    )
    from neardup.integrations.tables import DedupBatches, dedup_table, overlap_table
    from neardup.verify import MinHashVerifier

__all__ = [
    "BadInputError",
    "ConfigMismatchError",
    "DamagedFileError",
    "Decision",
    "Decisions",
    "DedupBatches",
    "Deduplicator",
    "EmptyTextError",
    "Fingerprinter",
    "HammingIndex",
    "IdfTable",
    "IndexFormatError",
    "Matches",
    "MinHashVerifier",
    "NeardupError",
    "Pairs",
    "TableDesign",
    "Verifier",
    "__version__",
    "all_pairs",
    "dedup_batch",
    "dedup_table",
    "duplicate_groups",
    "hamming",
    "normalize_text",
    "overlap_table",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
