"""neardup: near-duplicate text detection at scale with SimHash.

Data flow: text -> features -> fingerprint -> index -> dedup -> surfaces (CLI, service, Spark).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
