"""``neardup explain FILE ID``: replay what ``neardup dedup FILE`` decided for one document.

The whole file is decided again with the same options (:func:`neardup.dedup.trace`);
the decision step notes the kept candidates it
considered for the document, in order, with their similarities, the floor of each cluster and
whether it joined or refused. The member that refused is the one whose similarity set that
floor (a member of the cluster decided before the document).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Any

from neardup.cli._common import DataError, usage_error
from neardup.dedup import trace
from neardup.dedup.decisions import DUPLICATE
from neardup.io.documents import iter_documents
from neardup.io.readers import FormatError, InputError, detect_format, iter_records
from neardup.verify import MinHashVerifier, shingle_texts

if TYPE_CHECKING:
    from neardup.dedup import Deduplicator
    from neardup.dedup.decisions import Decisions
    from neardup.dedup.greedy import Considered
    from neardup.fingerprint import Fingerprinter

#: input formats that hold documents with ids (a ``.txt`` argument is a text to compare)
RECORD_FORMATS = ("jsonl", "csv", "parquet")


def is_document_file(a: str, b: str) -> bool:
    """Whether ``explain A B`` names a file of documents and an id (not two texts/files)."""
    if not os.path.exists(a) or os.path.isfile(b):
        return False
    try:
        return detect_format(a) in RECORD_FORMATS
    except FormatError:
        return False


def explain_document(
    dd: Deduplicator, path: str, doc_id: str, text_field: str, id_field: str, top: int = 10
) -> dict[str, Any]:
    """What ``dedup`` decided for the document ``doc_id`` of ``path`` and the evidence, with
    the ``top`` heaviest features and verifier shingles (``shingles``) shared with and
    differing from the document it was compared with last (``only_a``: the candidate's,
    ``only_b``: this document's).

    >>> import json, tempfile
    >>> from neardup import Deduplicator
    >>> rows = [{"id": "a", "text": "Storm hits the coast!"},
    ...         {"id": "b", "text": "storm hits the coast"}]
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write("".join(json.dumps(r) + "\\n" for r in rows))
    >>> info = explain_document(Deduplicator(), f.name, "b", "text", "id")
    >>> info["status"], info["duplicate_of"], info["similarity"], info["threshold"]
    ('duplicate', 'a', 1.0, 0.8)
    """
    try:
        docs = list(iter_documents(iter_records(path), text_field=text_field, id_field=id_field))
    except (InputError, FormatError) as e:
        raise DataError(str(e)) from None
    ids = [d.id for d in docs]
    where = [i for i, x in enumerate(ids) if x == doc_id or str(x) == doc_id]
    if not where:
        raise usage_error(
            f"no document of {path} has {id_field} {doc_id!r} ({len(ids):,} documents read; "
            f"--id-field names the id field)"
        )
    g = where[0]
    decided, evidence = trace(dd, [d.text for d in docs], positions=[g])
    out = _row(decided, ids, g)
    out.update(
        id=ids[g],
        config_id=dd.config_id,
        candidates=[_candidate(c, decided, ids, g) for c in evidence[g]],
    )
    if evidence[g]:
        other = evidence[g][-1].position
        out["compared_with"] = ids[other]
        out.update(features(dd.fingerprinter, docs[other].text, docs[g].text, top))
        out["shingles"] = shingle_lists(dd.verifier, docs[other].text, docs[g].text, top)
    if len(where) > 1:
        out["note"] = f"{len(where)} documents have this id; this is the first (position {g})"
    return out


def _row(d: Decisions, ids: list[Any], i: int) -> dict[str, Any]:
    """The fields ``dedup`` writes for document ``i``, plus the threshold that applied."""
    dup = int(d.duplicate_of[i])
    sim, need = float(d.similarity[i]), float(d.threshold[i])
    return {
        "status": d.statuses[i],
        "duplicate": dup >= 0,
        "duplicate_of": None if dup < 0 else ids[dup],
        "distance": None if dup < 0 else int(d.distance[i]),
        "similarity": None if dup < 0 or sim != sim else round(sim, 4),
        "threshold": None if need != need else need,
        "cluster_id": int(d.cluster_id[i]),
    }


def _candidate(c: Considered, d: Decisions, ids: list[Any], g: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": ids[c.position],
        "distance": c.distance,
        # without cluster_similarity the first kept candidate is joined at the decided value
        "similarity": c.similarity if c.similarity is not None else _row(d, ids, g)["similarity"],
        "floor": c.floor,
        "outcome": c.outcome,
    }
    if c.outcome == "refused":
        out["refused_by"] = _member_at_floor(d, ids, c, g)
    return out


def _member_at_floor(d: Decisions, ids: list[Any], c: Considered, g: int) -> Any:
    """The member of ``c``'s cluster decided before ``g`` whose similarity is its floor; the
    kept document itself when none joined it yet (floor 1: ``g`` is less similar to it than
    the cluster similarity)."""
    cluster = d.cluster_id[c.position]
    for m in range(g):  # keep="first": the processing order is the input order
        member = d.cluster_id[m] == cluster and d.status[m] == DUPLICATE
        if member and round(float(d.similarity[m]), 4) == c.floor:
            return ids[m]
    return ids[c.position]


def features(fp: Fingerprinter, a: str, b: str, top: int) -> dict[str, Any]:
    """The ``top`` heaviest fingerprint features shared by ``a`` and ``b`` and only in each
    (weight descending, then name), with their counts."""
    fa, fb = fp.features(a), fp.features(b)

    def ranked(feats: dict[str, float], keys: set[str]) -> list[tuple[str, float]]:
        return sorted(((f, round(feats[f], 4)) for f in keys), key=lambda x: (-x[1], x[0]))[:top]

    return {
        "features_a": len(fa),
        "features_b": len(fb),
        "shared": ranked(fa, fa.keys() & fb.keys()),
        "only_a": ranked(fa, fa.keys() - fb.keys()),
        "only_b": ranked(fb, fb.keys() - fa.keys()),
    }


def shingle_lists(verifier: Any, a: str, b: str, top: int) -> dict[str, Any]:
    """The verifier's shingles of ``a`` and ``b`` (its similarity's shingle size and mode, as
    :func:`~neardup.verify.shingle_texts` makes them): how many, their exact Jaccard (what the
    similarity estimates) and the ``top`` shared ones and only in each, by weight: occurrences
    (in both texts for shared ones), then first in the text. Empty for another verifier.

    >>> from neardup import MinHashVerifier
    >>> got = shingle_lists(MinHashVerifier(ngram=2), "a b c d", "a b c e", 2)
    >>> got["jaccard"], got["shared"], got["only_a"], got["only_b"]
    (0.5, [('a b', 2), ('b c', 2)], [('c d', 1)], [('c e', 1)])
    """
    if not isinstance(verifier, MinHashVerifier):
        return {}
    n, mode, seed = verifier.ngram, verifier.mode, verifier.seed
    sa, sb = (shingle_texts(t, n, mode=mode, seed=seed) for t in (a, b))
    ha, hb = {h for _, h in sa}, {h for _, h in sb}
    count_a, count_b = Counter(s for s, _ in sa), Counter(s for s, _ in sb)

    def ranked(keys: list[str], weight: Counter[str]) -> list[tuple[str, int]]:
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        return [(k, weight[k]) for k in sorted(first, key=lambda k: (-weight[k], first[k]))[:top]]

    in_a, in_b = [s for s, _ in sa], [s for s, _ in sb]
    return {
        "shingle_size": n,
        "shingles_a": len(ha),
        "shingles_b": len(hb),
        "jaccard": round(len(ha & hb) / len(ha | hb), 4) if ha | hb else None,
        "shared": ranked([s for s in in_b if s in count_a], count_a + count_b),
        "only_a": ranked([s for s in in_a if s not in count_b], count_a),
        "only_b": ranked([s for s in in_b if s not in count_a], count_b),
    }


def why(info: dict[str, Any]) -> list[str]:
    """The replayed decision as lines, in the order the rule took them."""
    lines = []
    for c in info["candidates"]:
        sim = "" if c["similarity"] is None else f" at similarity {c['similarity']}"
        if c["outcome"] == "refused":
            lines.append(
                f"candidate {c['id']}{sim}: its cluster refused (floor {c['floor']}, set by "
                f"member {c['refused_by']}: {c['similarity']} + {c['floor']} below 1 + "
                "cluster similarity)"
            )
        elif c["outcome"] == "closest":
            lines.append(f"every cluster refused: joins the closest, {c['id']}{sim}")
        else:
            lines.append(f"candidate {c['id']}{sim}, distance {c['distance']}: joined")
    if not info["candidates"] and info["status"] == "unique":
        lines.append("no kept document passed the candidate and verifier tests: kept")
    if info["threshold"] is not None:
        lines.append(f"threshold that applied: {info['threshold']}")
    return lines
