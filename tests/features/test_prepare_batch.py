"""The C ``prepare_batch`` (fingerprints and MinHash sketches from one tokenizer pass, issue 24)
against the separate kernels, and the in-place shingle keys against the Python reference.

The dedup pipeline takes ``prepare_batch`` when it can; its fingerprints, empty mask and
sketches must be those of ``Fingerprinter._fingerprint_packed`` and
``MinHashVerifier.sketch_packed`` bit for bit, for every configuration.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._backend import native
from neardup.dedup.prepare import _fused, prepare_chunk
from neardup.features.charclass import char_classes
from neardup.features.extract import shingles, tokens
from neardup.features.kernels import SHINGLE_MODE, feature_keys
from neardup.features.normalize import pack_prepared
from neardup.fingerprint import Fingerprinter
from neardup.verify import MinHashVerifier

pytestmark = pytest.mark.skipif(
    native() is None or not hasattr(native(), "prepare_batch"), reason="C extension not built"
)

ALPHABET = "ab1 中文字かなカナ한국어-ǘß,'. \t\n()Ωω٣\u0301\ufffd"
HAN = "中文字人民日报了的，。 "
WORDS = ["the", "cat", "sat", "on", "mat", "said,", "(Reuters)", "中国", "人民", "日报", "ω", "1.5"]


def corpus(seed: int, n: int = 300) -> list[str]:
    """English, Chinese, mixed and degenerate texts (empty, separators only, one word)."""
    rng = random.Random(seed)
    out = ["", " ", "!?", "a", "中", "好好好", "a  b\tc\n\nd, e. f"]
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 60))))
        elif kind == 1:
            out.append("".join(rng.choice(HAN) for _ in range(rng.randrange(80))))
        elif kind == 2:
            out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randrange(120))))
        else:
            out.append(rng.choice(WORDS) * rng.randrange(1, 5) + " 中文 " * rng.randrange(3))
    return out


def separate(fp: Fingerprinter, ver: MinHashVerifier, texts: list[str]) -> tuple[np.ndarray, ...]:
    packed = pack_prepared(texts)
    fps, empty = fp._fingerprint_packed(texts, packed)
    return np.asarray(fps), np.asarray(empty), ver.sketch_packed(*packed, [len(t) for t in texts])


FINGERPRINTERS = [
    Fingerprinter(),
    Fingerprinter(segmenter=None),
    Fingerprinter(analyzer="word", stopwords="en"),
    Fingerprinter(analyzer="shingle", ngram_size=2, weighting="tf", bits=128),
    Fingerprinter(analyzer="char", top_n=20, weighting="tf"),
    Fingerprinter(cjk_ngram_size=2, stopwords="auto", seed=7),
]
VERIFIERS = [
    MinHashVerifier(),
    MinHashVerifier(mode="word", ngram=2, seed=3),
    MinHashVerifier(mode="char", num_hashes=40, bits=16),
    MinHashVerifier(ngram=2, band_ngram=3, threshold=0.64, short_threshold=None),
]


@pytest.mark.parametrize("fp", FINGERPRINTERS, ids=lambda f: f.config_id[:12])
@pytest.mark.parametrize("ver", VERIFIERS, ids=repr)
def test_fused_equals_separate_kernels(fp: Fingerprinter, ver: MinHashVerifier) -> None:
    texts = corpus(len(fp.config_id) + ver.num_hashes + ver.ngram)
    no_han = [re.sub("[\u4e00-\u9fff]", "x", t) for t in texts]  # nothing to segment
    for batch in (texts, no_han):
        got = _fused(fp, ver, batch, pack_prepared(batch))
        assert got is not None
        for g, w in zip(got, separate(fp, ver, batch), strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_fused_path_is_taken_and_prepare_chunk_is_unchanged() -> None:
    """The default pipeline on mostly-CJK and English texts (no segmentation needed) takes the
    fused kernel, on two threads from OVERLAP_MIN texts, and gives the separate kernels'
    chunk."""
    texts = [t for t in corpus(5, 1500) if "ω" not in t] * 2
    fp, ver = Fingerprinter(segmenter=None), MinHashVerifier()
    assert _fused(fp, ver, texts, pack_prepared(texts)) is not None
    chunk = prepare_chunk(fp, ver, texts, None, timed=False, n_jobs=1)
    fps, empty, every = separate(fp, ver, texts)
    np.testing.assert_array_equal(chunk.fps, fps)
    np.testing.assert_array_equal(chunk.empty, empty)
    rows = ~empty
    np.testing.assert_array_equal(chunk.sketches[rows], every[rows])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(ALPHABET) | st.characters(), max_size=60))
def test_fused_equals_separate_on_any_text(text: str) -> None:
    fp, ver = Fingerprinter(segmenter=None), MinHashVerifier(ngram=2)
    texts = [text, text + " x", "y " + text]
    got = _fused(fp, ver, texts, pack_prepared(texts))
    assert got is not None
    for g, w in zip(got, separate(fp, ver, texts), strict=True):
        np.testing.assert_array_equal(g, w)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["ab", "c", "中文", "d1", "ω"]), max_size=12),
    st.lists(st.sampled_from([" ", "  ", ", ", ".", "\t", " (", "-"]), min_size=12, max_size=12),
    st.integers(1, 5),
)
def test_shingle_keys_hash_in_place_or_copied(words: list[str], gaps: list[str], n: int) -> None:
    """Shingle keys are XXH3 of the tokens joined by one space, whether the text holds that
    string (single spaces: hashed in place) or not (other separators: copied)."""
    text = "".join(w + g for w, g in zip(words, gaps, strict=False))
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    size = buf.size
    keys = np.zeros(size + 1, dtype=np.uint64)
    scratch = np.zeros(2 * size + 8, dtype=np.uint8)
    spans = [np.zeros(size + 1, dtype=np.int64) for _ in range(2)]
    stop = np.zeros(0, np.uint64)
    cls = char_classes()
    m = feature_keys(buf, 0, size, cls, SHINGLE_MODE, n, True, stop, scratch, *spans, keys)
    words = tokens(text, han_single=True)
    want = [xxhash.xxh3_64_intdigest(s.encode()) for s in shingles(words, n)]
    assert keys[:m].tolist() == want


UTF8_PIECES = [b"a", b"b c", b" ", b"\n", b"1", "中".encode(), "文字".encode(), "é".encode(),
               "한".encode(), "か".encode(), b"\xe4\xb8", b"\x80", b"\xbf\xbf", b"\xf0\x9f",
               b"\xf0abc", b"\xc3", b"\xed\xa0\x80", b"\xff", b"\xfe\x80\x80"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(UTF8_PIECES), max_size=40), min_size=1, max_size=6),
    st.sampled_from([(3, 5, 0, 4, 0), (1, 3, 0, 2, 1), (2, 5, 1, 3, 2), (3, 2, 0, 5, 0)]),
)
def test_prepare_batch_equals_separate_kernels_on_any_bytes(
    docs: list[list[bytes]], conf: tuple[int, int, int, int, int]
) -> None:
    """Malformed UTF-8 too (truncated and stray bytes, surrogates, 0xFF): the one-pass
    kernel's spans and char-stream units are those of fingerprint_batch and sketch."""
    mode, n, han_single, ngram, sk_mode = conf  # fingerprint mode/n, sketch ngram/mode
    parts = [b"".join(d) for d in docs]
    buf = np.frombuffer(b"".join(parts), dtype=np.uint8)
    off = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    cls, nd = char_classes(), len(parts)
    mod: Any = native()
    stop, ik, iv = np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.float64)
    salts = MinHashVerifier()._salts()[:16]
    fc = (mode, n, han_single, stop, 0, 0, ik, iv, 1.0, 0)
    fps, empty = np.zeros((nd, 1), np.uint64), np.zeros(nd, bool)
    mod.fingerprint_batch(buf, off, cls, *fc, fps, empty, 5)
    mins = np.zeros((nd, 16), np.uint64)
    mod.sketch(buf, off, np.full(nd, sk_mode, np.int8), cls, ngram, 0, salts, mins)
    got = np.zeros((nd, 1), np.uint64), np.zeros(nd, bool), np.zeros((nd, 16), np.uint64)
    segment = np.zeros(nd, bool)
    ngrams = np.array([ngram], np.int64)
    mod.prepare_batch(buf, off, cls, *fc, 5, got[0], got[1], sk_mode, ngrams, 0, salts, got[2],
                      segment)  # fmt: skip
    np.testing.assert_array_equal(got[0], fps)
    np.testing.assert_array_equal(got[1], empty)
    np.testing.assert_array_equal(got[2], mins)
