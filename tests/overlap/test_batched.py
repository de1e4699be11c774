"""The stream's batched C calls (``prepare_many``, ``Index.look_post_many``: a batch of texts
prepared, looked up and posted without the GIL, on the stream's front thread) equal the calls
one text at a time they replace, and the stream equals ``add`` / ``query`` one by one where a
batch evicts its sources or is refused."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._backend import overlap_kernels
from neardup.overlap import OverlapFinder, SeedBudgetError, finder
from neardup.overlap.forms import prepare_many
from neardup.overlap.index import Budget, GramIndex, Look, Looked
from neardup.overlap.pairs import PairParams, prepare_packed

pytestmark = pytest.mark.skipif(overlap_kernels() is None, reason="neardup._overlap not built")

PARAMS = PairParams(ngram=4, gap=30, min_length=6)
WORDS = [f"w{i}" for i in range(12)] + ["中文字", "北京", "ｂ１", "é", "ﬁ"]


def _docs(rng: random.Random, n: int) -> list[str]:
    """Texts of a small vocabulary, some repeating a word many times (over a small budget)."""
    out = []
    for _ in range(n):
        if rng.random() < 0.2:
            out.append(" ".join([rng.choice(WORDS)] * rng.randint(20, 200)))
        else:
            out.append(" ".join(rng.choices(WORDS, k=rng.randint(0, 60))))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=30) | st.sampled_from(WORDS), max_size=12))
def test_prepare_many_equals_prepare_one_by_one(texts: list[str]) -> None:
    # characters never seen before stop the batch until their fold is filled in
    assert prepare_many(texts, PARAMS) == [prepare_packed(t, PARAMS) for t in texts]


def test_prepare_many_refuses_a_text_that_is_not_a_str() -> None:
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        prepare_many(["a b", b"c d"], PARAMS)  # type: ignore[list-item]


def _one_by_one(
    index: GramIndex, packed: list[bytes], first: int, window: int | None, look: Look, b: Budget
) -> tuple[list[Looked], int, int]:
    """``look_post_many`` as ``seeds_raw`` and ``add_packed`` text by text (the finder's
    ``_budgeted`` rule)."""
    out: list[Looked] = []
    for k, p in enumerate(packed):
        grams = int.from_bytes(p[8:16], "little")
        limit = b.per_gram * max(grams, b.floor)
        try:
            out.append((*index.seeds_raw(p, look._replace(max_seeds=limit)), False))
        except SeedBudgetError as exc:
            if not b.trim:
                return out, k, exc.seeds
            out.append((*index.seeds_raw(p, look._replace(cap=b.per_gram)), True))
        if window is not None:
            index.add_packed(first + k, p, window)
    return out, len(packed), 0


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(1, 40),
    st.sampled_from([1, 2, 4]),
    st.sampled_from([1, 3, 50]),
    st.booleans(),
    st.booleans(),
)
def test_look_post_many_equals_look_and_post_one_by_one(
    seed: int, n: int, per_gram: int, max_df: int, trim: bool, add: bool
) -> None:
    rng = random.Random(seed)
    packed = prepare_many(_docs(rng, n), PARAMS)
    # a small floor, so that the repeated words go over their budget
    look, budget = Look(max_df, 2, rng.choice([1, 2])), Budget(per_gram, 8, trim)
    window = 4 if add else None
    fast, slow = GramIndex(), GramIndex()
    for index in (fast, slow):  # some postings to find, also with add=False
        for k, p in enumerate(packed[: n // 2]):
            index.add_packed(k, p, 4)
    first = n // 2
    got = fast.look_post_many(packed[first:], first, window, look, budget)
    want = _one_by_one(slow, packed[first:], first, window, look, budget)
    assert got == want
    for x, y in zip(fast.arrays(), slow.arrays(), strict=True):
        assert (x == y).all()


def _corpus(n: int) -> list[str]:
    """Documents copying sentences of earlier ones."""
    rng = random.Random(n)
    sents = [" ".join(rng.choices(WORDS[:12], k=14)) + "." for _ in range(30)]
    return [" ".join(rng.choices(sents, k=rng.randint(2, 6))) for _ in range(n)]


@pytest.mark.parametrize("batch", [1, 4, 512])
def test_stream_whose_sources_were_evicted_equals_add_one_by_one(
    batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a cache of 3 documents: most sources are prepared again, a batch at a time
    monkeypatch.setattr(finder, "_CACHE", 3)
    docs = _corpus(40)
    one = OverlapFinder(min_length=6, templates="keep")
    want = [one.add(t, f"d{i}") for i, t in enumerate(docs)]
    streamed = OverlapFinder(min_length=6, templates="keep")
    got = list(streamed.stream(((t, f"d{i}") for i, t in enumerate(docs)), batch=batch))
    far = [p for got in want for p in got if p.position - p.source_position > 3]
    assert len(far) > 10 and got == want


def test_a_refused_batch_stops_the_stream_where_add_stops() -> None:
    """The refused text and every text after it, in its batch and in batches already read,
    are neither indexed nor kept: the finder holds what ``add`` one by one held."""
    docs = _corpus(12)
    docs[5] = " ".join(["ab"] * 3000)
    one = OverlapFinder(max_seeds_per_gram=1, budget="refuse")
    for i, t in enumerate(docs[:5]):
        one.add(t, f"d{i}")
    one.add(docs[5][:300], "seed")  # its repeats give the refused text its postings
    with pytest.raises(SeedBudgetError) as refused:
        one.add(docs[5], "d5")
    streamed = OverlapFinder(max_seeds_per_gram=1, budget="refuse")
    items = [(t, f"d{i}") for i, t in enumerate(docs[:5])] + [(docs[5][:300], "seed")]
    items += [(t, f"d{i}") for i, t in enumerate(docs) if i >= 5]
    with pytest.raises(SeedBudgetError) as streamed_refused:
        list(streamed.stream(iter(items), batch=3))
    assert str(streamed_refused.value) == str(refused.value)
    assert len(streamed) == len(one) == 6
    assert streamed._index.arrays()[0].tolist() == one._index.arrays()[0].tolist()


def test_stream_refuses_a_text_that_is_not_a_str() -> None:
    with pytest.raises(TypeError, match="text must be a str, got int"):
        list(OverlapFinder().stream([("a b", None), (3, None)]))  # type: ignore[list-item]
