"""neardup: near-duplicate text detection at scale with SimHash.

Data flow: text -> features -> fingerprint -> index -> dedup -> surfaces (CLI, service, Spark).

>>> import neardup
>>> fp = neardup.Fingerprinter()
>>> neardup.hamming(fp.fingerprint("a b c d"), fp.fingerprint("a b c d")) == 0
True
"""

from __future__ import annotations

from neardup.features.idf import IdfTable
from neardup.features.normalize import normalize_text
from neardup.fingerprint import EmptyTextError, Fingerprinter, hamming

__version__ = "0.1.0"

__all__ = [
    "EmptyTextError",
    "Fingerprinter",
    "IdfTable",
    "__version__",
    "hamming",
    "normalize_text",
]
