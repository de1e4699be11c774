from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.extract import text_is_cjk
from neardup.verify import MinHashVerifier, shingle_hashes

M64 = (1 << 64) - 1


def splitmix(z: int) -> int:
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def reference_sketch(hashes: list[int], num_hashes: int, bits: int, seed: int = 0) -> list[int]:
    """Pure-Python b-bit MinHash, written from the definition."""
    salts = [
        xxhash.xxh3_64_intdigest(f"neardup-minhash-{i}".encode(), seed) for i in range(num_hashes)
    ]
    out = []
    for s in salts:
        m = min((splitmix(h ^ s) for h in hashes), default=M64)
        out.append(m & ((1 << bits) - 1))
    return out


def test_kernel_matches_pure_python_reference() -> None:
    v = MinHashVerifier(num_hashes=16, bits=16)
    sets = [shingle_hashes("the quick brown fox jumps over the lazy dog " * 3), shingle_hashes("a")]
    sk = v.sketch_sets(sets, lengths=[500, 1])
    for row, s in zip(sk, sets, strict=True):
        assert row[:-1].tolist() == reference_sketch([int(h) for h in s], 16, 16)
    assert sk[:, -1].tolist() == [0, 1]  # short-text flag


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, M64), max_size=40), min_size=1, max_size=4),
    st.sampled_from([1, 31, 32, 33, 64, 70, 128]),
)
def test_minhash_blocks_match_reference(sets: list[list[int]], num_hashes: int) -> None:
    # the C kernel keeps 32 salts per register block plus a tail: every split of num_hashes
    v = MinHashVerifier(num_hashes=num_hashes, bits=16)
    arrays = [np.array(s, dtype=np.uint64) for s in sets]
    sk = v.sketch_sets(arrays)
    for row, s in zip(sk, sets, strict=True):
        assert row[:-1].tolist() == reference_sketch(s, num_hashes, 16)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.text(alphabet="ab cd\u4e00\u4e8c.Ａ", max_size=60), min_size=1, max_size=5),
    st.sampled_from(["auto", "word", "char"]),
    st.integers(1, 5),
)
def test_sketch_many_equals_minhash_of_shingle_sets(texts: list[str], mode: str, n: int) -> None:
    # sketch_many fuses shingling and MinHash (no sorted, deduplicated set in between)
    v = MinHashVerifier(num_hashes=40, ngram=n, mode=mode, bits=16, band_ngram=n)  # one part
    sets = [shingle_hashes(t, n, mode=mode) for t in texts]
    expect = v.sketch_sets(sets, lengths=[len(t) for t in texts])
    assert v.sketch_many(texts).tolist() == expect.tolist()


def test_shingles_match_definition() -> None:
    # word 5-shingles; the hash is an order-sensitive combination of per-word xxh3 values
    words = ["a", "b", "c", "d", "e", "f"]
    assert len(shingle_hashes(" ".join(words))) == 2
    assert len(shingle_hashes("这是一个很好的产品")) == 9 - 5 + 1  # char 5-grams
    assert len(np.intersect1d(shingle_hashes("a b c d e f"), shingle_hashes("x a b c d e"))) == 1
    assert not np.intersect1d(shingle_hashes("a b c d e"), shingle_hashes("e d c b a")).size


def test_golden_values_stable_across_processes() -> None:
    code = (
        "from neardup.verify import MinHashVerifier as V;"
        "print(V(num_hashes=8, ngram=5).sketch_many(['Oil prices rose sharply on Monday after"
        " the OPEC meeting', '质量很好，物流也快'])[:, :8].tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = MinHashVerifier(num_hashes=8, ngram=5).sketch_many(
        ["Oil prices rose sharply on Monday after the OPEC meeting", "质量很好，物流也快"]
    )
    assert out.stdout.strip() == str(here[:, :8].tolist())
    # values unchanged since issue 13; flag: 56 characters is no longer short (short_length=50)
    assert here.tolist() == [[*row, flag] for row, flag in zip(GOLDEN, (0, 1), strict=True)]


GOLDEN = [[108, 111, 207, 230, 255, 204, 31, 239], [191, 53, 104, 193, 246, 216, 83, 238]]


@settings(max_examples=30, deadline=None)
@given(st.integers(20, 300), st.floats(0.0, 1.0), st.integers(0, 10_000))
def test_similarity_estimates_jaccard(size: int, target: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shared = round(target * size)
    pool = rng.choice(2**62, size=2 * size, replace=False).astype(np.uint64)
    a = pool[:size]
    b = np.concatenate([a[:shared], pool[size : 2 * size - shared]])
    true_j = shared / (2 * size - shared)
    v = MinHashVerifier(num_hashes=256, bits=16)
    sk = v.sketch_sets([np.sort(a), np.sort(b)])
    est = float(v.estimate(sk[:1], sk[1:])[0])
    assert float(v.similarity(sk[:1], sk[1:])[0]) == est  # long texts: no margin
    # 256 hashes: standard error <= 0.032; allow ~4.5 sigma
    assert abs(est - true_j) <= 0.15


def test_short_texts_need_the_stricter_threshold() -> None:
    v = MinHashVerifier(
        num_hashes=256, bits=16, threshold=0.6, short_threshold=0.8, short_length=300
    )
    pool = np.arange(1, 201, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    a = np.sort(pool[:100])
    b = np.sort(np.concatenate([pool[:70], pool[100:130]]))  # J = 70/130
    long_ = v.sketch_sets([a, b], lengths=[1000, 1000])
    short = v.sketch_sets([a, b], lengths=[1000, 120])
    est = float(v.estimate(long_[:1], long_[1:])[0])
    assert float(v.similarity(short[:1], short[1:])[0]) == pytest.approx(max(0.0, est - 0.2))
    same = v.sketch_sets([a, a], lengths=[100, 100])
    assert v.confirm(same[:1], same[1:]).tolist() == [True]


def _han(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    return "".join(chr(0x4E00 + int(c)) for c in rng.integers(0, 3000, n))


def test_default_confirms_5pct_edited_150_char_chinese_text() -> None:
    # issue 20: texts of 50-300 characters got the 0.8 short-text rule, so a 5 %-edited
    # 150-character paragraph (4-gram Jaccard ~0.68) was never confirmed
    v = MinHashVerifier()
    text = _han(150, 1)
    edited = list(text)
    for p in np.random.default_rng(2).choice(150, 8, replace=False).tolist():
        edited[p] = "的"
    sk = v.sketch_many([text, "".join(edited)])
    assert sk[:, -1].tolist() == [0, 0]  # 150 characters is not short any more
    assert v.confirm(sk[:1], sk[1:]).tolist() == [True]
    tiny = v.sketch_many([text[:30], text[:28] + "的的"])  # under 50 characters: still strict
    assert tiny[:, -1].tolist() == [1, 1]
    assert float(v.similarity(tiny[:1], tiny[1:])[0]) < float(v.estimate(tiny[:1], tiny[1:])[0])


def test_band_part_is_a_separate_sketch_of_band_ngram_shingles() -> None:
    texts = [_han(200, 3), _han(200, 3)[:190] + _han(10, 4), "the quick brown fox jumps over"]
    split = MinHashVerifier(ngram=2, band_ngram=3, num_hashes=128)
    assert split.width == 257 and split.bytes_per_doc == 257
    assert MinHashVerifier(ngram=2, band_ngram=3).bytes_per_doc == 2 * 192 + 1
    sk = split.sketch_many(texts)
    two = MinHashVerifier(ngram=2, band_ngram=2, num_hashes=128)  # no band part
    three = MinHashVerifier(ngram=3, num_hashes=128)
    assert (sk[:, :128] == three.sketch_many(texts)[:, :128]).all()  # band part first
    assert (sk[:, 128:] == two.sketch_many(texts)).all()  # similarity part + flag
    s2 = two.sketch_many(texts)
    assert split.estimate(sk[:2], sk[1:]).tolist() == two.estimate(s2[:2], s2[1:]).tolist()
    assert MinHashVerifier(ngram=3, band_ngram=3).width == 193  # same size: no split
    with pytest.raises(ValueError, match="sketch_sets"):
        split.sketch_sets([np.arange(3, dtype=np.uint64)])


def test_short_threshold_none_means_plain_estimate() -> None:
    v = MinHashVerifier(short_threshold=None)
    sk = v.sketch_many(["a b c d e f g", "a b c d e f h"])
    assert v.similarity(sk[:1], sk[1:]).tolist() == v.estimate(sk[:1], sk[1:]).tolist()


@pytest.mark.parametrize(
    ("kwargs", "word"), [({"band_ngram": 0}, "band_ngram"), ({"threshold": "0.5"}, "threshold")]
)
def test_new_parameters_are_validated(kwargs: dict[str, object], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        MinHashVerifier(**kwargs)  # type: ignore[arg-type]


def test_identical_and_disjoint() -> None:
    v = MinHashVerifier()
    sk = v.sketch_many(
        [
            "alpha beta gamma delta epsilon zeta eta",
            "alpha beta gamma delta epsilon zeta eta",
            "one two three four five six seven eight",
        ]
    )
    sim = v.estimate(sk[[0, 0]], sk[[1, 2]])
    assert sim[0] == 1.0 and sim[1] < 0.1
    assert v.confirm(sk[[0]], sk[[1]]).tolist() == [True]


def test_normalisation_invariance() -> None:
    v = MinHashVerifier()
    sk = v.sketch_many(["ＡＢＣ news today: markets rise", "abc NEWS today markets\nrise"])
    assert (sk[0] == sk[1]).all()


def test_bytes_and_dtype() -> None:
    assert MinHashVerifier(num_hashes=64, bits=8).bytes_per_doc == 65
    v = MinHashVerifier(num_hashes=32, bits=16)
    sk = v.sketch_many(["x y"])
    assert sk.dtype == np.uint16 and sk.shape == (1, 33) and v.bytes_per_doc == 66


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bits": 4}, "bits"),
        ({"num_hashes": 0}, "num_hashes"),
        ({"threshold": 1.5}, "threshold"),
        ({"mode": "x"}, "mode"),
        ({"ngram": 0}, "ngram"),
        ({"short_threshold": -1.0}, "short_threshold"),
        ({"short_length": -5}, "short_length"),
    ],
)
def test_bad_params(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MinHashVerifier(**kwargs)  # type: ignore[arg-type]


def test_bad_inputs() -> None:
    v = MinHashVerifier()
    with pytest.raises(TypeError, match="single str"):
        v.sketch_many("abc")
    with pytest.raises(ValueError, match="shape"):
        v.similarity(np.zeros((2, 129), np.uint8), np.zeros((3, 129), np.uint8))


def test_script_detection() -> None:
    assert text_is_cjk("这是中文内容 with English")
    assert not text_is_cjk("English with 一 char")


def test_edited_copies_setting_finds_a_10pct_edited_copy_end_to_end(tmp_path: Path) -> None:
    from neardup.dedup import Deduplicator

    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(5000)]
    base = [vocab[i] for i in rng.integers(0, 5000, 150)]
    edited = list(base)
    for p in rng.choice(150, 15, replace=False).tolist():  # 10 % of the words substituted
        edited[p] = vocab[int(rng.integers(5000))]
    texts = [" ".join(base), " ".join(edited)]
    v = MinHashVerifier(ngram=2, band_ngram=3, threshold=0.64, short_threshold=None)
    assert Deduplicator(verifier=v).run(texts).status.tolist() == [0, 1]
    assert Deduplicator().run(texts).status.tolist() == [0, 0]  # 4-gram J ~0.5 < 0.6
    first = Deduplicator(verifier=v)
    first.feed(texts[:1])
    first.save(tmp_path / "state")  # the 257-column sketches persist and reload
    assert Deduplicator.load(tmp_path / "state").feed(texts[1:]).status.tolist() == [1]
