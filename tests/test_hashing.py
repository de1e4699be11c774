import numpy as np
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.hashing import bit_word, key_of, mix64, xxh3_64

LENGTHS = st.one_of(st.integers(0, 300), st.sampled_from([511, 1024, 1025, 2048, 4097]))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=LENGTHS, offset=st.integers(0, 9), seed=st.integers(0, 2**64 - 1))
def test_xxh3_matches_reference_implementation(data, n, offset, seed):
    raw = data.draw(st.binary(min_size=n + offset, max_size=n + offset))
    buf = np.frombuffer(raw, dtype=np.uint8)
    assert int(xxh3_64(buf, offset, n, np.uint64(seed))) == xxhash.xxh3_64_intdigest(
        raw[offset : offset + n], seed=seed
    )


def test_key_of_is_utf8_xxh3_and_survives_lone_surrogates():
    assert key_of("新闻") == xxhash.xxh3_64_intdigest("新闻".encode())
    assert key_of("a\ud800b") != key_of("ab")


def test_bit_words_are_independent_and_pinned():
    k = np.uint64(key_of("oil"))
    assert bit_word(k, np.uint64(0), 0) == k
    w1 = int(bit_word(k, np.uint64(0), 1))
    w_seed = int(bit_word(k, np.uint64(7), 0))
    assert len({int(k), w1, w_seed}) == 3
    for x in (0, 1, 2**63, 2**64 - 1, key_of("x")):
        assert int(mix64(np.uint64(x))) == py_mix64(x)


def py_mix64(x: int) -> int:
    """splitmix64's finaliser (Steele, Lea & Flood 2014), written independently in Python."""
    m = 2**64 - 1
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & m
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & m
    return x ^ (x >> 31)
