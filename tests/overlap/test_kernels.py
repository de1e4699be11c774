"""The C kernels of neardup.overlap (``neardup._overlap``) equal their Python references:
tokens, grams, winnowing, the per-pair step and whole finder runs, on random inputs."""

from __future__ import annotations

import random
from difflib import SequenceMatcher

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._backend import overlap_kernels
from neardup.overlap import OverlapFinder, SeedBudgetError
from neardup.overlap.pairs import (
    PairParams,
    Prepared,
    coarse_grams,
    fine_grams,
    kernel_params,
    pack,
    pair_passages,
    pair_passages_reference,
    prepare,
    shared_seeds,
)
from neardup.overlap.templates import TemplateBatch, TemplateCounts, template_flags
from neardup.overlap.tokens import tokenize, winnow, winnow_reference

K = overlap_kernels()
needs_kernel = pytest.mark.skipif(K is None, reason="neardup._overlap not built")
PARAMS = PairParams(ngram=4, gap=20, min_length=5)
# letters, digits, Han, kana, full-width, accents, marks, underscore, punctuation, spaces
ALPHABET = "abcXYZ019 _.,\n中文字北京在了。！あカＡｂ１éßﬁ\u0301\u00a0-'"


def _reference(text: str) -> Prepared:
    toks = tokenize(text)
    return Prepared(toks, coarse_grams(toks, PARAMS), fine_grams(toks, PARAMS))


def _same(a: Prepared, b: Prepared) -> None:
    for x, y in ((a.tokens, b.tokens),):
        for name in ("starts", "ends", "units", "hashes"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)
    for g, h in ((a.grams, b.grams), (a.fine, b.fine)):
        for name in ("first", "last", "hashes"):
            np.testing.assert_array_equal(getattr(g, name), getattr(h, name), err_msg=name)


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(ALPHABET), max_size=80) | st.text(max_size=40))
def test_prepare_equals_the_python_tokenizer(text: str) -> None:
    _same(prepare(text, PARAMS), _reference(text))


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=40), st.integers(1, 6))
def test_winnow_kernel_equals_reference(values: list[int], window: int) -> None:
    assert K is not None
    h = np.array(values, dtype=np.uint64)
    out = np.empty(h.size, dtype=np.int64)
    n = K.winnow(h, window, out)
    assert out[:n].tolist() == winnow_reference(h, window).tolist() == winnow(h, window).tolist()


def _pair_texts(rng: random.Random) -> tuple[str, str]:
    words = [
        rng.choice(["the", "of", "cat", "dog", "sat", "ran", "中", "文", "北", "京"])
        for _ in range(6)
    ]
    words += ["".join(rng.choices("abcdefgh", k=rng.randint(2, 6))) for _ in range(30)]
    src = " ".join(rng.choices(words, k=rng.randint(5, 120)))
    toks = src.split(" ")
    i = rng.randrange(len(toks))
    piece = toks[i : i + rng.randint(1, 60)]
    for _ in range(rng.randint(0, 8)):  # edits
        if piece:
            piece[rng.randrange(len(piece))] = rng.choice(words)
    query = " ".join(rng.choices(words, k=rng.randint(0, 30)) + piece + rng.choices(words, k=10))
    return query, src


@needs_kernel
@pytest.mark.parametrize("seed", range(300))
def test_pair_kernel_equals_reference(seed: int) -> None:
    rng = random.Random(seed)
    query, src = _pair_texts(rng)
    params = PairParams(
        ngram=rng.choice([2, 3, 4]), gap=rng.choice([0, 3, 20]), min_length=rng.choice([1, 4, 8])
    )
    q, d = prepare(query, params), prepare(src, params)
    seeds = shared_seeds(q, d)
    if seeds.shape[0] > 1 and rng.random() < 0.5:  # a subset, as winnowing leaves
        seeds = seeds[np.sort(rng.sample(range(seeds.shape[0]), k=seeds.shape[0] // 2 or 1))]
    if seeds.size == 0:
        assert pair_passages(q, d, seeds, params) == []
        return
    assert pair_passages(q, d, seeds, params) == pair_passages_reference(q, d, seeds, params)


@needs_kernel
def test_pack_of_python_arrays_equals_the_kernel_buffer() -> None:
    text = "Ｔhe cat 在北京 sat on the mat, the cat sat."
    assert pack(_reference(text)) == prepare(text, PARAMS).packed


def _corpus(seed: int) -> list[str]:
    rng = random.Random(seed)
    vocab = ["".join(rng.choices("abcdefghij", k=rng.randint(2, 7))) for _ in range(400)]
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 300)]
    docs: list[str] = []
    for _ in range(60):
        if rng.random() < 0.5:
            text = " ".join(rng.choices(vocab, k=rng.randint(20, 200)))
        else:
            text = "".join(rng.choices(han, k=rng.randint(30, 300)))
        if docs and rng.random() < 0.6:
            src = rng.choice(docs)
            a = rng.randrange(len(src))
            piece = list(src[a : a + rng.randint(20, 400)])
            for _ in range(len(piece) // 12):
                piece[rng.randrange(len(piece))] = rng.choice("xyz中")
            at = rng.randrange(len(text) + 1)
            text = text[:at] + " " + "".join(piece) + " " + text[at:]
        docs.append(text)
    return docs


@needs_kernel
@pytest.mark.parametrize("seed", range(4))
def test_finder_with_kernel_equals_python_finder(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _corpus(seed)
    fast = [p.to_dict() for p in OverlapFinder(min_length=6).find(docs)]
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    try:
        slow = [p.to_dict() for p in OverlapFinder(min_length=6).find(docs)]
    finally:
        monkeypatch.delenv("NEARDUP_KERNELS")
        overlap_kernels.cache_clear()
    assert fast and fast == slow


@needs_kernel
@pytest.mark.parametrize("words", [1, 2])
def test_seed_budget_refuses_the_same_text_with_the_same_numbers(
    words: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget is counted on the index's postings before any is copied, by the C index and
    by the numpy one alike: the same refusal (numbers and message) for a text of one or two
    words repeated, the same passages for a short piece of it, under the budget, and the same
    passages for the text trimmed (its grams of too many postings left out)."""
    rng = random.Random(words)
    text = " ".join(rng.choices(["ab", "cde"][:words], k=3_000))
    sentence = " ".join(f"w{k}" for k in range(40))

    def run() -> tuple[str, list[dict[str, object]], list[dict[str, object]]]:
        f = OverlapFinder(max_seeds_per_gram=1, budget="refuse")
        f.add(text, "src")
        with pytest.raises(SeedBudgetError) as refused:
            f.query(text, "q")
        piece = [p.to_dict() for p in f.query(text[:60], "piece")]
        # the same grams left out by both indexes: the repeated ones, not a copied sentence's
        trim = OverlapFinder(max_seeds_per_gram=1)
        trim.add(text, "src")
        trim.add(sentence, "other")
        trimmed = [p.to_dict() for p in trim.query(text + " " + sentence, "q")]
        assert trim.over_budget_texts == (1, ["q"])
        assert [p["source_id"] for p in trimmed] == ["other"]
        return str(refused.value), piece, trimmed

    fast = run()
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    try:
        slow = run()
    finally:
        monkeypatch.delenv("NEARDUP_KERNELS")
        overlap_kernels.cache_clear()
    assert fast == slow and fast[1], fast


def test_python_path_finds_a_copy(python_only: None) -> None:
    assert overlap_kernels() is None
    src = "one two three four five six seven eight nine ten eleven twelve thirteen"
    f = OverlapFinder(min_length=5)
    f.add(src)
    [p] = f.query("so: " + src)
    assert p.span == (4, 4 + len(src)) and p.score == 1.0


@needs_kernel
@pytest.mark.parametrize("seed", range(20))
def test_index_kernel_equals_numpy_index(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from neardup.overlap.index import GramIndex

    rng = np.random.default_rng(seed)
    fast = GramIndex()
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    slow = GramIndex()
    monkeypatch.delenv("NEARDUP_KERNELS")
    overlap_kernels.cache_clear()
    assert fast._c is not None and slow._c is None
    for doc in range(30 if seed % 2 else 600):  # many postings: the kernel's radix sort
        h = rng.integers(0, 40, size=int(rng.integers(0, 30))).astype(np.uint64)
        first = rng.integers(0, 50, size=h.size)
        where = np.stack([first, first + 2], 1)
        fast.add(doc, h, where)
        slow.add(doc, h, where)
    q = rng.integers(0, 45, size=25).astype(np.uint64)
    qf = np.arange(q.size, dtype=np.int64)
    for max_df, min_seeds in ((3, 1), (10, 2), (100, 1)):
        a, b = (
            fast.seeds(q, qf, qf + 1, max_df, min_seeds),
            slow.seeds(q, qf, qf + 1, max_df, min_seeds),
        )
        assert a[0] == b[0]
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(a[2], b[2])
    for x, y in zip(fast.arrays(), slow.arrays(), strict=True):
        np.testing.assert_array_equal(x, y)
    again = GramIndex.from_arrays(*fast.arrays())
    np.testing.assert_array_equal(
        again.seeds(q, qf, qf + 1, 100, 1)[2], fast.seeds(q, qf, qf + 1, 100, 1)[2]
    )


@pytest.mark.parametrize("seed", [17, *range(40)])
def test_seeds_on_many_diagonals(seed: int) -> None:
    """Repetitive texts put a passage's strong seeds on many diagonals, none holding a quarter
    of them (seed 17): the largest run bounds the passage; the kernel equals the reference
    (it read outside its seeds before the fix)."""
    rng = random.Random(seed)
    words = ["".join(rng.choices("abc", k=2)) for _ in range(rng.randint(3, 8))]
    src = " ".join(rng.choices(words, k=rng.randint(20, 80)))
    query = " ".join(rng.choices(words, k=rng.randint(10, 50)))
    params = PairParams(
        ngram=rng.choice([2, 3]), gap=rng.choice([1, 2, 3, 5]), min_length=rng.choice([1, 2, 3])
    )
    q, d = prepare(query, params), prepare(src, params)
    seeds = shared_seeds(q, d)
    if seeds.size == 0:
        return
    expected = pair_passages_reference(q, d, seeds, params)
    if K is not None:
        assert pair_passages(q, d, seeds, params) == expected


@needs_kernel
@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(40, 400),
    st.integers(40, 400),
    st.sampled_from([2, 3, 4]),
    st.sampled_from([0, 2, 10, 30]),
    st.integers(0, 2**32),
)
def test_clusters_of_repetitive_pairs_equal_the_reference(
    vocabulary: int, n_src: int, n_query: int, ngram: int, gap: int, seed: int
) -> None:
    """A few words repeated: seeds on many diagonals, clusters opened and closed all along.
    The kernel finds a seed's cluster through buckets of the clusters' last source starts
    and merges boxes with a list of the ones still in reach; the reference scans every open
    cluster and compares every pair of boxes: the same passages."""
    rng = random.Random(seed)
    words = ["".join(rng.choices("abcd", k=rng.randint(1, 4))) for _ in range(vocabulary)]
    src = " ".join(rng.choices(words, k=n_src))
    toks = src.split(" ")
    cut = rng.randrange(len(toks))
    query = " ".join(rng.choices(words, k=n_query // 4) + toks[cut : cut + n_query])
    params = PairParams(ngram=ngram, gap=gap, min_length=rng.choice([1, 4, 10]))
    q, d = prepare(query, params), prepare(src, params)
    seeds = shared_seeds(q, d)
    if seeds.shape[0] > 1 and rng.random() < 0.5:  # a subset, as winnowing leaves
        seeds = seeds[np.sort(rng.sample(range(seeds.shape[0]), k=seeds.shape[0] // 3 or 1))]
    if seeds.size:
        assert pair_passages(q, d, seeds, params) == pair_passages_reference(q, d, seeds, params)


@needs_kernel
@pytest.mark.parametrize("seed", range(4))
def test_many_passages_of_one_pair_equal_the_reference(seed: int) -> None:
    """A short text of five words repeated against a long one: dozens of passage boxes in one
    pair, each of which the kernel reads only through the seeds in its query or source range
    (past 8 boxes, as here); the reference scans every seed for every box: the same passages."""
    rng = random.Random(seed)
    words = ["ab", "cde", "fg", "hij", "kl"]
    src = " ".join(rng.choices(words, k=1_500))
    query = " ".join(rng.choices(words, k=120))
    params = PairParams(ngram=4, gap=30, min_length=10)
    q, d = prepare(query, params), prepare(src, params)
    seeds = shared_seeds(q, d)
    found = pair_passages(q, d, seeds, params)
    assert found and found == pair_passages_reference(q, d, seeds, params)


@needs_kernel
@pytest.mark.parametrize("batch", [1, 3, 512])
def test_stream_equals_add_and_query_one_by_one(batch: int) -> None:
    # the per-pair step of a batch runs on a second thread: same passages, same order
    docs = _corpus(5)
    one = OverlapFinder(min_length=6)
    want = [one.add(t, f"d{i}") for i, t in enumerate(docs[:40])]
    asked = [one.query(t) for t in docs[40:]]
    streamed = OverlapFinder(min_length=6)
    got = list(streamed.stream(((t, f"d{i}") for i, t in enumerate(docs[:40])), batch=batch))
    got_q = list(streamed.stream(((t, None) for t in docs[40:]), add=False, batch=batch))
    assert sum(map(len, want)) > 10 and sum(map(len, asked)) > 3
    assert (got, got_q) == (want, asked) and len(streamed) == 40


@needs_kernel
def test_pairs_many_equals_pairs_and_reports_bad_seeds() -> None:
    k = overlap_kernels()
    assert k is not None
    text = _corpus(1)[5]
    q, d = prepare(text, PARAMS), prepare("a b c " + text[: len(text) // 2], PARAMS)
    seeds = shared_seeds(q, d)
    bounds = np.array([0, seeds.shape[0]], dtype=np.int64)
    assert q.packed is not None and d.packed is not None
    job = (q.packed, [d.packed], seeds, bounds)
    one = k.pairs(*job, *kernel_params(PARAMS))
    assert one and seeds.shape[0] > 2
    assert k.pairs_many([job, job], *kernel_params(PARAMS)) == [one, one]
    bad = seeds.copy()
    bad[0, 1] = 10**6
    with pytest.raises(IndexError, match="outside"):
        k.pairs_many([job, (q.packed, [d.packed], bad, bounds)], *kernel_params(PARAMS))
    with pytest.raises(ValueError, match="not a packed document"):
        k.pairs_many([(q.packed, [b"x" * 8], seeds, bounds)], *kernel_params(PARAMS))
    with pytest.raises(TypeError, match="sources must be packed"):
        k.pairs_many([(q.packed, ["text"], seeds, bounds)], *kernel_params(PARAMS))


def _frame_reference(
    q: list[int], s: list[int], weights: list[int], strict: list[bool], loose: list[bool], n: int
) -> tuple[int, bool]:
    """templates._own_units' Python path, written out: difflib's blocks of >= n tokens."""
    blocks = SequenceMatcher(None, q, s, autojunk=False).get_matching_blocks()
    shared = [False] * len(q)
    for i, _, k in blocks:
        shared[i : i + k] = [k >= n] * k
    differ = sum(k for *_, k in blocks) < max(len(q), len(s))
    covered = loose if differ else strict
    return sum(w for w, a, c in zip(weights, shared, covered, strict=True) if a and not c), differ


@needs_kernel
@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(0, 5), max_size=60),
    st.lists(st.integers(0, 5), max_size=60),
    st.integers(1, 5),
    st.randoms(use_true_random=False),
)
def test_frame_kernel_equals_difflib(
    q: list[int], s: list[int], n: int, rng: random.Random
) -> None:
    # a small alphabet: many runs of equal length, so difflib's tie-breaking decides the blocks
    k = overlap_kernels()
    assert k is not None
    weights = [rng.randint(1, 3) for _ in q]
    strict = [rng.random() < 0.3 for _ in q]
    loose = [a or rng.random() < 0.3 for a in strict]
    want = _frame_reference(q, s, weights, strict, loose, n)
    got = k.frame_units(
        np.array(q, dtype=np.uint64),
        np.array(s, dtype=np.uint64),
        np.array(weights, dtype=np.int64),
        np.array(strict, dtype=np.bool_),
        np.array(loose, dtype=np.bool_),
        n,
    )
    assert got == want


@needs_kernel
@pytest.mark.parametrize("seed", range(3))
def test_template_flags_with_kernel_equal_python(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # wire formulas with other parties and figures, and copies with a few words changed: the
    # frame test decides both ways
    rng = random.Random(seed)
    words = ["".join(rng.choices("abcdefghij", k=5)) for _ in range(300)]  # no digit
    texts = []
    for i in range(60):
        slot = " ".join(rng.choices(words, k=rng.randint(0, 3)))
        tail = " ".join(rng.choices(words, k=rng.randint(5, 40)))
        texts.append(f"Qtly div {rng.randint(1, 40)} cts vs {slot} prior pay April {i} {tail}")
    toks = [tokenize(t) for t in texts]
    batch = TemplateBatch(texts, [(t.starts, t.ends, t.units, t.hashes) for t in toks], 4)
    df = TemplateCounts().count(batch, add=True)
    rows = []
    for _ in range(300):
        i, a = rng.randrange(1, 60), rng.randrange(30)
        b = a + rng.randint(20, 200)
        if rng.random() < 0.5:  # the formula of another text
            j, c = rng.randrange(60), rng.randrange(30)
            source = texts[j][c : c + rng.randint(20, 200)]
        else:  # a copy, a word or two changed
            cut = texts[i][a:b].split(" ")
            for _ in range(rng.randint(0, 2)):
                cut[rng.randrange(len(cut))] = rng.choice(words)
            source = " ".join(cut)
        rows.append((i, a, b, source, 1.0))
    got = template_flags(batch, df, rows, 3, 8)
    monkeypatch.setenv("NEARDUP_KERNELS", "python")
    overlap_kernels.cache_clear()
    try:
        assert template_flags(batch, df, rows, 3, 8) == got
    finally:
        monkeypatch.delenv("NEARDUP_KERNELS")
        overlap_kernels.cache_clear()
    assert 0 < sum(got) < len(got)


@needs_kernel
@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from(ALPHABET), max_size=60), max_size=6),
    st.integers(1, 4),
)
def test_template_keys_kernel_equals_numpy(texts: list[str], ngram: int) -> None:
    # digits (ASCII, full-width) masked, grams within each text, the sampled half
    toks = [tokenize(t) for t in texts]
    batch = TemplateBatch(texts, [(t.starts, t.ends, t.units, t.hashes) for t in toks], ngram)
    want = batch._keys()  # the numpy reference on the same batch
    for name, ref in zip(("digit", "first", "last", "hashes"), want, strict=True):
        got = getattr(batch, name)
        np.testing.assert_array_equal(got, ref, err_msg=name)
        assert got.dtype == ref.dtype, name


@needs_kernel
def test_template_keys_kernel_refuses_tokens_outside_their_text() -> None:
    k = overlap_kernels()
    assert k is not None
    t = tokenize("Qtly div 25 cts")
    bad = (t.starts, t.ends + 1, t.units, t.hashes)  # the last token runs past the text
    out = [np.empty(4, dtype=d) for d in (np.bool_, np.int64, np.int64, np.uint64)]
    with pytest.raises(ValueError, match="tokens of text 0 lie outside it"):
        k.template_keys(["Qtly div 25 cts"], [bad], 2, 1, 2, *out)
    good = (t.starts, t.ends, t.units, t.hashes)
    small = [np.empty(2, dtype=d) for d in (np.bool_, np.int64, np.int64, np.uint64)]
    with pytest.raises(ValueError, match="digit one item each"):  # 4 tokens, room for 2
        k.template_keys(["Qtly div 25 cts"], [good], 2, 1, 2, *small)


@needs_kernel
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "d", "1", "2", "x", "y"]), max_size=12), max_size=8
    ),
    st.integers(0, 8),
)
def test_template_counts_kernel_equal_numpy(docs: list[list[str]], cut: int) -> None:
    # two batches counted, one looked up, then the saved form and a table loaded from it
    texts = [" ".join(d) for d in docs]
    batches = []
    for part in (texts[:cut], texts[cut:], texts):
        toks = [tokenize(t) for t in part]
        batches.append(
            TemplateBatch(part, [(t.starts, t.ends, t.units, t.hashes) for t in toks], 2)
        )

    def run() -> list[list[int]]:
        c = TemplateCounts()
        out = [
            c.count(b, add=a).tolist() for b, a in zip(batches, (True, True, False), strict=True)
        ]
        keys, docs_ = c.arrays()
        again = TemplateCounts.from_arrays(keys, docs_)
        return [
            *out,
            keys.tolist(),
            docs_.tolist(),
            [len(c)],
            again.count(batches[2], add=False).tolist(),
        ]

    got = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEARDUP_KERNELS", "python")
        overlap_kernels.cache_clear()
        try:
            assert run() == got
        finally:
            mp.delenv("NEARDUP_KERNELS")
            overlap_kernels.cache_clear()
