"""The overlap kernels' loader and bindings: ``_backend.OV`` only where ``overlap_kernels()``
says the C kernels run; the bindings' errors (checked with the GIL, before any kernel runs);
and the two forms of a prepared text (``overlap.forms``) posted and looked up on the C index
and on the numpy one giving the same seeds, on random texts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import _backend
from neardup._backend import overlap_kernels
from neardup.overlap.forms import (
    Form,
    as_packed,
    as_prepared,
    gram_count,
    look_up,
    post,
    prepare_form,
)
from neardup.overlap.index import GramIndex
from neardup.overlap.pairs import PairParams

needs_kernel = pytest.mark.skipif(overlap_kernels() is None, reason="neardup._overlap not built")
PARAMS = PairParams(ngram=4, gap=20, min_length=5)
WORDS = st.sampled_from(["tax", "rate", "bank", "oil", "said", "pct", "中", "文", "1987", "de"])


def test_ov_is_refused_where_the_kernels_are_off(python_only: None) -> None:
    assert overlap_kernels() is None
    with pytest.raises(AttributeError, match="overlap_kernels\\(\\) is None"):
        _backend.OV.winnow  # noqa: B018


@needs_kernel
def test_ov_is_the_extension_where_the_kernels_run() -> None:
    assert _backend.OV is overlap_kernels()
    out = np.empty(5, dtype=np.int64)
    assert _backend.OV.winnow(np.array([5, 3, 9, 1, 7], np.uint64), 2, out) == 2


@needs_kernel
def test_index_bindings_refuse_bad_arguments_before_posting() -> None:
    ix = _backend.OV.Index()
    h = np.array([1, 2, 3], dtype=np.uint64)
    first, last = np.array([0, 1, 2]), np.array([1, 2, 3])
    ix.add(0, h, first, last)
    with pytest.raises(ValueError, match="token offsets out of range"):
        ix.add(1, h, first, np.array([1, 2, -1]))  # last before first
    with pytest.raises(OverflowError, match="doc must be in"):
        ix.add(2**32 + 1, h, first, last)
    with pytest.raises(ValueError, match="one length"):
        ix.add(1, h, first[:2], last)
    with pytest.raises(TypeError, match="packed document"):
        ix.add_packed(1, b"not packed", 4)
    with pytest.raises(TypeError, match="packed document"):
        ix.seeds_packed(b"\0" * 8, 50, 1, 2)
    assert ix.postings() == 3  # nothing of the refused calls was posted
    docs, bounds, seeds = ix.seeds(h, first, last, 50, 1)
    assert np.frombuffer(docs, np.int64).tolist() == [0]
    assert np.frombuffer(bounds, np.int64).tolist() == [0, 3]
    assert np.frombuffer(seeds, np.int64).reshape(-1, 4)[:, 2].tolist() == [0, 1, 2]
    assert ix.seeds(h, first, last, 50, 1, 2) == 3  # over max_seeds: the count


def _numpy_index() -> GramIndex:
    """A GramIndex on the numpy reference (the C kernels switched off while it is made)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_KERNELS", "python")
        overlap_kernels.cache_clear()
        try:
            return GramIndex()
        finally:
            mp.delenv("NEARDUP_KERNELS")
            overlap_kernels.cache_clear()


def _text(words: list[str]) -> str:
    return " ".join(words)


@needs_kernel
@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(WORDS, min_size=0, max_size=40), min_size=1, max_size=8),
    query=st.lists(WORDS, min_size=0, max_size=40),
    window=st.integers(1, 4),
)
def test_both_forms_post_and_look_up_the_same_seeds(
    docs: list[list[str]], query: list[str], window: int
) -> None:
    """The packed form on the C index and the Prepared form on the numpy index (the
    reference) answer the same documents, bounds and seed rows, in the same order."""
    fast, slow = GramIndex(), _numpy_index()
    assert fast.packed and not slow.packed
    for doc, words in enumerate(docs):
        text = _text(words)
        packed: Form = prepare_form(text, PARAMS, packed=True)
        prepared = as_prepared(text, packed)
        assert as_packed(prepared) == packed and gram_count(prepared) == gram_count(packed)
        post(fast, doc, packed, window)
        post(slow, doc, prepared, window)
    text = _text(query)
    packed = prepare_form(text, PARAMS, packed=True)
    a = look_up(fast, packed, 50, 1, window, 0)
    b = look_up(slow, as_prepared(text, packed), 50, 1, window, 0)
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
