"""Apache Spark engine: the local engine's dedup decisions for collections one machine cannot hold.

Pipeline (each stage a DataFrame; see :mod:`neardup.spark.engine`): fingerprints, sketches and
candidate keys computed on executors with the library's own code (Arrow batches); exact copies
collapsed into *nodes* (one per distinct normalised text); candidate pairs of nodes by an
equi-join on the candidate design's keys; the accept predicate (Hamming, verifier) on pairs;
connected components (large-star / small-star, :mod:`neardup.spark.components`); then
:func:`neardup.dedup.greedy.decide_in_order` inside each component, in processing order.
Decisions equal :meth:`neardup.Deduplicator.run` on the same ordered input.

Needs the ``spark`` extra (``pip install 'neardup[spark]'``) and Java 17.
"""

from __future__ import annotations

from typing import Any

MISSING_EXTRA = "the Spark engine needs PySpark: pip install 'neardup[spark]' (and Java 17)"


def require_pyspark() -> Any:
    """Import pyspark or raise ImportError naming the extra to install."""
    try:
        import pandas  # noqa: F401  (pyspark's Arrow/pandas UDFs need them; the extra pulls both)
        import pyarrow  # noqa: F401
        import pyspark
    except ImportError:
        raise ImportError(MISSING_EXTRA) from None
    return pyspark


__all__ = ["MISSING_EXTRA", "require_pyspark"]
