"""Exact-duplicate keys: one function for every engine that decides duplicates (library, CLI,
service and Spark engine)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from neardup._backend import C, native
from neardup.features.normalize import pack_prepared, prepare_many


def exact_keys(
    texts: Sequence[str],
    *,
    prepared: bool = False,
    packed: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[int]:
    """The exact-duplicate key of each text: xxh3_128 of its UTF-8 ``normalize_text``.

    That is ``xxh3_128(" ".join(prepare_many([t])[0].split()))``: whitespace runs collapse to
    one space. ``prepared=True``: ``texts`` are already :func:`prepare_many` output (callers
    that normalise once for fingerprints, keys and sketches). With the C extension the
    whitespace pass runs over one buffer for the whole batch; ``packed`` is that buffer when
    the caller already made it (:func:`~neardup.features.normalize.pack_prepared` of ``texts``).

    >>> exact_keys(["Ｆｕｌｌ  width"]) == [xxhash.xxh3_128_intdigest(b"full width")]
    True
    >>> exact_keys([" a\\u3000b\\n", "a b"])[0] == exact_keys(["a b"])[0]
    True
    """
    digest = xxhash.xxh3_128_intdigest
    if native() is None:
        norm = list(texts) if prepared else prepare_many(texts)
        return [digest(" ".join(p.split()).encode("utf-8", "surrogatepass")) for p in norm]
    if packed is None:
        packed = pack_prepared(texts, prepared=prepared)
    buf, offsets = packed
    out = np.empty(buf.size, dtype=np.uint8)
    out_off = np.empty(offsets.size, dtype=np.int64)
    C.collapse_spaces(buf, offsets, out, out_off)  # C only: native() is the extension here
    view = out.data
    ends = out_off.tolist()
    return [digest(view[ends[i] : ends[i + 1]]) for i in range(offsets.size - 1)]
