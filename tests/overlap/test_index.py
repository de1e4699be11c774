"""The gram index (``GramIndex``, the C hash table when built, the numpy segments otherwise)
against a brute-force dict: the same seeds, in the same order, and the same saved arrays, on
keys chosen to collide (one table part, one low half: one home slot, told apart by the high
half kept with the postings) and across the growths of a part (up to the size where its table
is mapped on its own)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._backend import overlap_kernels
from neardup.overlap.index import GramIndex

Posting = tuple[int, int, int]  # doc, first, last


class Model:
    """Gram hash -> postings in insertion order: what the index must answer."""

    def __init__(self) -> None:
        self.posts: dict[int, list[Posting]] = defaultdict(list)

    def add(self, doc: int, keys: list[int], where: list[tuple[int, int]]) -> None:
        for key, (first, last) in zip(keys, where, strict=True):
            self.posts[key].append((doc, first, last))

    def seeds(
        self,
        keys: list[int],
        first: list[int],
        last: list[int],
        max_df: int,
        min_seeds: int,
        cap: int = 0,
    ) -> tuple[list[int], list[int], list[list[int]]]:
        by_doc: dict[int, list[list[int]]] = defaultdict(list)
        for i, key in enumerate(keys):
            posts = self.posts.get(key, [])
            if len({doc for doc, _, _ in posts}) > max_df:  # documents, not postings
                continue
            if 0 < cap < len(posts):  # a text over its budget: postings, not documents
                continue
            for doc, pf, pl in posts:
                by_doc[doc].append([first[i], last[i], pf, pl])
        docs = sorted(d for d, rows in by_doc.items() if len(rows) >= min_seeds)
        bounds, rows = [0], []
        for d in docs:
            rows += by_doc[d]
            bounds.append(len(rows))
        return docs, bounds, rows

    def arrays(self) -> tuple[list[int], list[list[int]]]:
        hashes, rows = [], []
        for key in sorted(self.posts):
            for p in self.posts[key]:
                hashes.append(key)
                rows.append(list(p))
        return hashes, rows


def _u64(keys: list[int]) -> np.ndarray:
    return np.array(keys, dtype=np.uint64).reshape(-1)


def _check(ix: GramIndex, model: Model, queries: list[int]) -> None:
    q = _u64(queries)
    qf = np.arange(q.size, dtype=np.int64)
    ql = qf + 3
    for max_df, min_seeds, cap in ((1, 1, 0), (3, 1, 0), (5, 2, 0), (10**6, 1, 0), (3, 1, 1),
                                   (10**6, 1, 2), (5, 2, 3)):  # fmt: skip
        docs, bounds, seeds = ix.seeds(q, qf, ql, max_df, min_seeds, cap=cap)
        want = model.seeds(queries, qf.tolist(), ql.tolist(), max_df, min_seeds, cap)
        assert list(docs) == want[0]
        assert bounds.tolist() == want[1]
        assert seeds.tolist() == want[2]
    h, p = ix.arrays()
    want_h, want_p = model.arrays()
    assert h.tolist() == want_h and p.tolist() == want_p
    assert len(ix) == len(want_h)


# keys built to collide: few table parts (top byte), a few values of bits 48-55, few low halves
# (the slot's check and home), plus any 64-bit value
TOP = st.sampled_from([0, 1, 0x7F, 0xFF])
TAG = st.sampled_from([0, 1, 2, 0xFF])
LOW = st.one_of(st.integers(0, 40), st.integers(0, (1 << 48) - 1))
KEY = st.one_of(
    st.builds(lambda t, g, lo: (t << 56) | (g << 48) | lo, TOP, TAG, LOW),
    st.integers(0, (1 << 64) - 1),
)
DOC = st.lists(st.tuples(KEY, st.integers(0, 1000), st.integers(0, 5)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(DOC, max_size=30), extra=st.lists(KEY, max_size=20))
def test_index_equals_a_dict(docs: list[list[tuple[int, int, int]]], extra: list[int]) -> None:
    ix, model = GramIndex(), Model()
    for doc, grams in enumerate(docs):
        keys = [k for k, _, _ in grams]
        where = [(f, f + w) for _, f, w in grams]
        ix.add(doc, _u64(keys), np.array(where, dtype=np.int64).reshape(-1, 2))
        model.add(doc, keys, where)
    queries = [k for grams in docs[::2] for k, _, _ in grams[:10]] + extra
    _check(ix, model, queries)
    again = GramIndex.from_arrays(*ix.arrays())
    _check(again, model, queries)


@pytest.mark.parametrize("part", [0, 0x80])
def test_index_across_many_growths_of_one_part(part: int) -> None:
    """100,000 distinct keys in one table part (16 slots at first), some repeated and one in
    every document 9 times (900 postings: runs of 1, 2, .. 128, then 256): the part grows by
    half 23 times, past the size where its table is mapped (1 MiB), and every key keeps its
    postings in order; an empty part and absent keys answer nothing."""
    rng = np.random.default_rng(part)
    low = rng.choice(1 << 40, size=100_000, replace=False).astype(np.uint64)
    keys = (np.uint64(part) << np.uint64(56)) | low
    ix, model = GramIndex(), Model()
    for doc, chunk in enumerate(np.array_split(np.arange(keys.size), 100)):
        hot = np.full(9, keys[7])
        picked = np.concatenate([keys[chunk], keys[rng.integers(0, keys.size, size=20)], hot])
        first = rng.integers(0, 10**6, size=picked.size)
        where = np.stack([first, first + 4], 1)
        ix.add(doc, picked, where)
        model.add(doc, picked.tolist(), [(int(a), int(b)) for a, b in where])
    absent = [(part << 56) | int(x) for x in rng.integers(1 << 41, 1 << 42, size=50)]
    other_part = [((part ^ 1) << 56) | int(x) for x in low[:20]]
    queries = keys[rng.integers(0, keys.size, size=300)].tolist() + absent + other_part
    queries.append(int(keys[7]))
    _check(ix, model, queries)
    _check(GramIndex.from_arrays(*ix.arrays()), model, queries)


@pytest.mark.skipif(overlap_kernels() is None, reason="neardup._overlap not built")
@pytest.mark.parametrize("window", [1, 3, 4])
def test_packed_document_seeds_equal_the_array_call(window: int) -> None:
    """``seeds_packed`` / ``add_packed`` (the finder's path) answer as ``seeds`` / ``add`` do
    on the grams winnowing keeps."""
    from neardup.overlap.pairs import PairParams, prepare, prepare_packed
    from neardup.overlap.tokens import winnow

    params = PairParams(ngram=4, gap=30, min_length=10)
    texts = [" ".join(f"w{(i * 7 + j * j) % 50}" for j in range(60)) for i in range(40)]
    packed, plain = GramIndex(), GramIndex()
    asked = 0
    for doc, text in enumerate(texts):
        g = prepare(text, params).grams
        keep = winnow(g.hashes, window)
        q = (g.hashes[keep], g.first[keep], g.last[keep])
        a = packed.seeds_packed(prepare_packed(text, params), 50, 2, window)
        b = plain.seeds(*q, 50, 2)
        assert a[0] == b[0] and a[1].tolist() == b[1].tolist() and a[2].tolist() == b[2].tolist()
        asked += len(a[0])
        packed.add_packed(doc, prepare_packed(text, params), window)
        plain.add(doc, g.hashes[keep], np.stack([g.first[keep], g.last[keep]], 1))
    assert asked > 0  # the texts share grams: the look-ups found sources
    for x, y in zip(packed.arrays(), plain.arrays(), strict=True):
        np.testing.assert_array_equal(x, y)


@given(
    texts=st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=40), min_size=2, max_size=6),
    window=st.integers(2, 5),
    shrink=st.integers(0, 4),
    max_df=st.integers(1, 6),
)
@settings(max_examples=80, deadline=None)
def test_winnowed_look_ups_keep_the_winnowing_guarantee(
    texts: list[list[int]], window: int, shrink: int, max_df: int
) -> None:
    """The finder's look-ups (a query's grams that winnowing with ``query_window`` <= the
    posting ``window`` keeps) against documents posted with ``window``: every seed is one that
    looking up every gram gives, and every window of ``window`` grams the query shares with a
    document (under ``max_df``) leaves a seed inside it on both sides (small alphabets: grams
    repeat within and across texts)."""
    from neardup.overlap.tokens import winnow

    grams = [_u64([k * 1_000_003 + 7 for k in t]) for t in texts]
    ix = GramIndex()
    for doc, g in enumerate(grams[:-1]):
        kept = winnow(g, window)
        ix.add(doc, g[kept], np.stack([kept, kept + 1], 1).astype(np.int64))
    q = grams[-1]
    pos = np.arange(q.size, dtype=np.int64)
    asked = winnow(q, max(1, window - shrink))  # the query_window
    docs, bounds, few = ix.seeds(q[asked], pos[asked], pos[asked] + 1, max_df, 1)
    _, _, every = ix.seeds(q, pos, pos + 1, max_df, 1)
    assert {tuple(r) for r in few.tolist()} <= {tuple(r) for r in every.tolist()}
    df: dict[int, int] = defaultdict(int)
    for h in ix.arrays()[0].tolist():
        df[h] += 1
    for doc, g in enumerate(grams[:-1]):
        rows = (
            few[bounds[docs.index(doc)] : bounds[docs.index(doc) + 1]] if doc in docs else few[:0]
        )
        seeds = {(r[0], r[2]) for r in rows.tolist()}
        for i in range(q.size - window + 1):
            for j in range(g.size - window + 1):
                if q[i : i + window].tolist() != g[j : j + window].tolist():
                    continue
                # the window's smallest hash: posted by doc, asked by the query
                low = int(q[i : i + window].min())
                if df[low] > max_df:
                    continue
                assert any(
                    i <= a < i + window and j <= b < j + window and int(q[a]) == low
                    for a, b in seeds
                ), (doc, i, j)
