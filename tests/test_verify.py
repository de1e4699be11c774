from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.verify import MinHashVerifier, is_cjk_text, shingle_hashes

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
    sk = v.sketch_sets(sets)
    for row, s in zip(sk, sets, strict=False):
        assert row.tolist() == reference_sketch([int(h) for h in s], 16, 16)


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
        "print(V(num_hashes=8).sketch_many(['Oil prices rose sharply on Monday after the OPEC"
        " meeting', '质量很好，物流也快'])[:, :8].tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    here = MinHashVerifier(num_hashes=8).sketch_many(
        ["Oil prices rose sharply on Monday after the OPEC meeting", "质量很好，物流也快"]
    )
    assert out.stdout.strip() == str(here.tolist())
    assert here.tolist() == GOLDEN


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
    est = float(v.similarity(sk[:1], sk[1:])[0])
    # 256 hashes: standard error <= 0.032; allow ~4.5 sigma
    assert abs(est - true_j) <= 0.15


def test_identical_and_disjoint() -> None:
    v = MinHashVerifier()
    sk = v.sketch_many(
        [
            "alpha beta gamma delta epsilon zeta eta",
            "alpha beta gamma delta epsilon zeta eta",
            "one two three four five six seven eight",
        ]
    )
    sim = v.similarity(sk[[0, 0]], sk[[1, 2]])
    assert sim[0] == 1.0 and sim[1] < 0.1
    assert v.confirm(sk[[0]], sk[[1]]).tolist() == [True]


def test_normalisation_invariance() -> None:
    v = MinHashVerifier()
    sk = v.sketch_many(["ＡＢＣ news today: markets rise", "abc NEWS today markets\nrise"])
    assert (sk[0] == sk[1]).all()


def test_bytes_and_dtype() -> None:
    assert MinHashVerifier(num_hashes=64, bits=8).bytes_per_doc == 64
    v = MinHashVerifier(num_hashes=32, bits=16)
    assert v.sketch_many(["x y"]).dtype == np.uint16 and v.bytes_per_doc == 64


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bits": 4}, "bits"),
        ({"num_hashes": 0}, "num_hashes"),
        ({"threshold": 1.5}, "threshold"),
        ({"mode": "x"}, "mode"),
        ({"ngram": 0}, "ngram"),
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
        v.similarity(np.zeros((2, 64), np.uint8), np.zeros((3, 64), np.uint8))


def test_script_detection() -> None:
    assert is_cjk_text("这是中文内容 with English")
    assert not is_cjk_text("English with 一 char")
