"""``neardup dedup --pairs FILE``: every verified candidate pair with its similarity.

What a datasketch or text-dedup user expects beside the decisions: each pair of documents
that are candidates of each other and pass the threshold
(:func:`~neardup.dedup.core.verified_pairs`), whoever was kept, one row per pair: ``id_a``
(the earlier document), ``id_b``, ``similarity`` (the estimated Jaccard, 4 decimals) and
``distance`` (Hamming). An exact copy of a text is not a verified pair: it is the same text
(its ``status`` says ``exact_duplicate``). Written by the same writers as ``--out``.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

from neardup.dedup.core import verified_pairs
from neardup.dedup.decisions import concat_batches
from neardup.dedup.pairs import pair_records
from neardup.io import open_writer

if TYPE_CHECKING:
    from neardup.dedup import Deduplicator
    from neardup.io.documents import Document


def pair_rows(
    dd: Deduplicator, texts: list[str], ids: list[Any], chunk_size: int = 4096
) -> list[dict[str, Any]]:
    """The pairs file's rows for documents ``texts`` named ``ids``, in (a, b) position order.

    >>> from neardup import Deduplicator
    >>> text = "the storm hit the coast at night and the ferry to the island was cancelled"
    >>> pair_rows(Deduplicator(), [text, text + " again", text], ["a", "b", "c"])
    [{'id_a': 'a', 'id_b': 'b', 'similarity': 0.9268, 'distance': 10}]
    """
    it = iter(texts)
    chunks = []
    while part := list(islice(it, chunk_size)):
        chunks.append(dd.prepare(part))
    chunk = concat_batches(chunks)
    a, b, dist, sim = verified_pairs(
        dd.state.decide_config, dd.state.candidates, dd.verifier, chunk
    )
    return pair_records(a, b, dist, sim, ids)


def write_pairs(path: str, dd: Deduplicator, docs: Iterable[Document]) -> str:
    """Write the pairs of ``docs`` to ``path``; returns the summary's note."""
    texts, ids = [], []
    for doc in docs:
        texts.append(doc.text)
        ids.append(doc.id)
    rows = pair_rows(dd, texts, ids)
    with open_writer(path) as w:
        for row in rows:
            w.write(row)
    return f"pairs: {len(rows):,} verified candidate pairs -> {path}"
