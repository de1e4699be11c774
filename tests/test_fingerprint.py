"""Fingerprinter: reference equality, golden values, properties, bad input."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import EmptyTextError, Fingerprinter, IdfTable, hamming
from neardup.features.kernels import feature_keys
from neardup.hashing import key_of

from tests.test_hashing import py_mix64

GOLDEN_RATIO = 0x9E3779B97F4A7C15
M64 = 2**64 - 1

EN = (
    "Crude oil prices rose sharply on Monday after OPEC ministers meeting in Vienna agreed "
    "to extend output cuts until the end of the year, traders said."
)
ZH = "国务院总理今天在北京会见了来访的法国外长，双方就两国关系和共同关心的国际问题交换了意见。"
MIXED = "苹果公司发布了iPhone 15，售价5999元起；Apple said sales in China rose 12%."


def reference_fingerprint(fp: Fingerprinter, text: str) -> int:
    """SimHash written independently: features from ``fp.features``, bits from xxhash + splitmix."""
    weights = fp.features(text)
    value = 0
    for word in range(fp.bits // 64):
        acc = [0.0] * 64
        total = 0.0
        for feature, w in weights.items():
            k = xxhash.xxh3_64_intdigest(feature.encode("utf-8", "surrogatepass"))
            h = (
                k
                if (fp.seed == 0 and word == 0)
                else py_mix64((k + (2 * fp.seed + word) * GOLDEN_RATIO) & M64)
            )
            total += w
            for b in range(64):
                if h >> b & 1:
                    acc[b] += w
        value = (value << 64) | sum(1 << b for b in range(64) if 2 * acc[b] > total)
    return value


CONFIGS = [
    {},
    {"analyzer": "shingle", "ngram_size": 2},
    {"analyzer": "char", "ngram_size": 4},
    {"weighting": "tf"},
    {"top_n": 5},
    {"stopwords": "auto"},
    {"segmenter": None},
    {"analyzer": "word"},
    {"analyzer": "auto", "cjk_ngram_size": 3},
    {"bits": 128},
    {"bits": 128, "analyzer": "shingle", "ngram_size": 2, "seed": 99},
]
TEXTS = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list("的了是中国人民日报新闻 ,.!ａｂ１　\u0301\ud800\x00\x07\n")),
    ),
    max_size=80,
)


@pytest.mark.parametrize("config", CONFIGS, ids=str)
@settings(max_examples=60, deadline=None)
@given(text=TEXTS)
def test_kernel_equals_independent_reference(config, text):
    fp = Fingerprinter(**config)
    if not fp.features(text):
        with pytest.raises(EmptyTextError):
            fp.fingerprint(text)
        return
    assert fp.fingerprint(text) == reference_fingerprint(fp, text)


@settings(max_examples=80, deadline=None)
@given(text=TEXTS, mode=st.sampled_from([0, 1, 2]), n=st.integers(1, 5))
def test_kernel_keys_equal_python_feature_strings(text, mode, n):
    analyzer = ["word", "shingle", "char"][mode]
    fp = Fingerprinter(analyzer=analyzer, ngram_size=n, stopwords="en")
    prepared = np.frombuffer(fp.prepare(text).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    size = prepared.size + 8
    keys = np.empty(size, dtype=np.uint64)
    from neardup.features.charclass import char_classes

    m = feature_keys(
        prepared,
        0,
        prepared.size,
        char_classes(),
        mode,
        n,
        False,
        fp._stop_keys,
        np.empty(size * 2, dtype=np.uint8),
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        keys,
    )
    assert keys[:m].tolist() == [key_of(f) for f in fp.feature_list(text)]


# Golden fingerprints: the stable contract across versions, processes and engines (service,
# Spark). Changing any of these is a breaking change: bump FORMAT_VERSION and say so.
WORD_TF = {"analyzer": "word", "weighting": "tf", "segmenter": "auto"}
DEFAULT = {"analyzer": "auto", "ngram_size": 3, "cjk_ngram_size": 5, "weighting": "none"}
GOLDEN = [
    # the default features (chosen by measurement, docs/ACCURACY.md)
    ({}, EN, 0xD31270008D4A0D06),
    (DEFAULT, ZH, 0xD8EDE84DC8AF0E68),
    (DEFAULT, MIXED, 0xEA2D2D4BD33A761C),
    ({**DEFAULT, "bits": 128}, ZH, 0xD8EDE84DC8AF0E68610023AA3C91E0C8),
    (WORD_TF, EN, 0xB348D5CB18D17467),
    (WORD_TF, ZH, 0x3BDE85A0DCF29B07),
    (WORD_TF, MIXED, 0x54066B0714D799F2),
    ({"analyzer": "shingle", "ngram_size": 3}, EN, 0xD31270008D4A0D06),
    ({"analyzer": "char", "ngram_size": 5}, ZH, 0xD0EDE90DC8830A58),
    ({**WORD_TF, "bits": 128}, EN, 0xB348D5CB18D17467613CA64144C784AC),
    ({**WORD_TF, "bits": 128}, MIXED, 0x54066B0714D799F2BA388D404102DEFC),
]


@pytest.mark.parametrize(("config", "text", "expected"), GOLDEN)
def test_golden_fingerprints(config, text, expected):
    assert Fingerprinter(**config).fingerprint(text) == expected


def test_golden_config_id():
    assert Fingerprinter(**WORD_TF).config_id == "fp1-bb27221231c4c096"
    assert Fingerprinter().config_id == Fingerprinter(**DEFAULT).config_id == "fp1-636accae8e1a8ab5"


def test_128_bit_high_half_is_the_64_bit_fingerprint():
    assert Fingerprinter(bits=128).fingerprint(EN) >> 64 == Fingerprinter().fingerprint(EN)
    many = Fingerprinter(bits=128).fingerprint_many([EN, ZH])
    assert many.shape == (2, 2) and many.dtype == np.uint64
    assert (int(many[1, 0]) << 64) | int(many[1, 1]) == Fingerprinter(bits=128).fingerprint(ZH)


def test_fingerprint_many_matches_single_and_parallel():
    texts = [EN, ZH, MIXED, "short one", EN.upper()] * 900
    fp = Fingerprinter()
    one = fp.fingerprint_many(texts)
    assert one.dtype == np.uint64 and one.shape == (len(texts),)
    assert one[:5].tolist() == [fp.fingerprint(t) for t in texts[:5]]
    assert np.array_equal(fp.fingerprint_many(texts, n_jobs=2), one)
    assert one[0] == one[4]  # case folding


def test_segmenters_agree():
    texts = [ZH, MIXED, "结婚的和尚未结婚的都来了", "他说的确实在理，中华人民共和国成立了"]
    a = Fingerprinter(segmenter="jieba").fingerprint_many(texts)
    b = Fingerprinter(segmenter="rjieba").fingerprint_many(texts)
    assert np.array_equal(a, b)


def test_segmenters_agree_on_peoples_daily(peoples_daily):
    a = Fingerprinter(segmenter="jieba").fingerprint_many(peoples_daily[:150])
    b = Fingerprinter(segmenter="rjieba").fingerprint_many(peoples_daily[:150])
    assert np.array_equal(a, b)


def edit(text: str, rate: float, rng: random.Random, vocab: list[str]) -> str:
    words = text.split()
    for _ in range(max(1, int(len(words) * rate))):
        words[rng.randrange(len(words))] = rng.choice(vocab)
    return " ".join(words)


def test_small_edit_small_distance_unrelated_far_english(reuters):
    rng = random.Random(0)
    vocab = " ".join(reuters[:50]).split()
    fp = Fingerprinter()
    base = fp.fingerprint_many(reuters)
    edited = fp.fingerprint_many([edit(t, 0.01, rng, vocab) for t in reuters])
    near = hamming(base, edited)
    far = hamming(base[:-1], base[1:])
    assert np.median(near) <= 5
    assert 28 <= far.mean() <= 36


def test_small_edit_small_distance_unrelated_far_chinese(peoples_daily):
    rng = random.Random(1)
    fp = Fingerprinter()
    edited = []
    for t in peoples_daily:
        chars = list(t)
        for _ in range(max(1, len(chars) // 100)):
            chars[rng.randrange(len(chars))] = rng.choice("的一是在不了有和人这中大为上个国")
        edited.append("".join(chars))
    base = fp.fingerprint_many(peoples_daily)
    near = hamming(base, fp.fingerprint_many(edited))
    far = hamming(base[:-1], base[1:])
    # a changed character changes one or two jieba words, so up to ~6 shingles: a 1% character
    # edit moves a few more bits than in English, still far from unrelated articles
    assert np.median(near) <= 8
    assert np.percentile(near, 90) < np.percentile(far, 5)
    assert 28 <= far.mean() <= 36


@pytest.mark.parametrize("bad", [None, 12, b"bytes", ["list"]])
def test_non_string_is_a_type_error_naming_the_type(bad):
    with pytest.raises(TypeError, match=type(bad).__name__):
        Fingerprinter().fingerprint(bad)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        Fingerprinter().fingerprint_many(["ok", bad])


@pytest.mark.parametrize("text", ["", "   ", "!!! ... ???", "\x00\x07\n"])
def test_featureless_text_raises_and_is_masked(text):
    fp = Fingerprinter()
    with pytest.raises(EmptyTextError):
        fp.fingerprint(text)
    with pytest.raises(EmptyTextError, match=r"rows \[1\]"):
        fp.fingerprint_many(["fine text", text])
    _, empty = fp.fingerprint_many(["fine text", text], return_mask=True)
    assert empty.tolist() == [False, True]
    assert isinstance(EmptyTextError("x"), ValueError)


def test_only_stop_words_is_empty():
    with pytest.raises(EmptyTextError):
        Fingerprinter(stopwords="en").fingerprint("The and of it")


def test_surrogates_and_controls_do_not_crash():
    fp = Fingerprinter()
    value = fp.fingerprint("abc\ud800def\x00\x1bghi \udfff")
    assert value == fp.fingerprint("abc\ud800def\x00\x1bghi \udfff")
    assert Fingerprinter(analyzer="word").feature_list("abc\ud800def") == ["abc", "def"]


def test_options_are_validated_with_helpful_messages():
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        Fingerprinter(bits=32)
    with pytest.raises(ValueError, match="fit_idf"):
        Fingerprinter(weighting="tfidf")
    with pytest.raises(ValueError, match="analyzer"):
        Fingerprinter(analyzer="words")
    with pytest.raises(ValueError, match="ngram_size"):
        Fingerprinter(analyzer="char", ngram_size=0)
    with pytest.raises(TypeError):
        Fingerprinter(64)  # type: ignore[misc]


def test_config_id_tracks_every_option_and_round_trips():
    ids = {Fingerprinter(**c).config_id for c in CONFIGS}
    assert len(ids) == len(CONFIGS)
    fp = Fingerprinter(analyzer="shingle", stopwords="en", bits=128)
    again = Fingerprinter.from_config(fp.get_config())
    assert again.config_id == fp.config_id
    assert again.fingerprint(EN) == fp.fingerprint(EN)
    clone = pickle.loads(pickle.dumps(fp))
    assert clone.fingerprint(MIXED) == fp.fingerprint(MIXED)


def _synthetic_news(n: int, seed: int = 0) -> list[str]:
    """Texts of random words from a skewed vocabulary (common and rare words, as in news)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    return [" ".join(rng.choices(vocab, weights, k=rng.randint(60, 200))) for _ in range(n)]


def test_tfidf_and_idf_table_round_trip(tmp_path):
    reuters = _synthetic_news(100)
    base = Fingerprinter()
    table = base.fit_idf(reuters[:100])
    path = tmp_path / "idf.tsv"
    table.save(path)
    loaded = IdfTable.load(path)
    assert loaded.digest == table.digest and len(loaded) == len(table)
    fp = Fingerprinter(weighting="tfidf", idf=loaded)
    assert fp.fingerprint(reuters[0]) == Fingerprinter(weighting="tfidf", idf=table).fingerprint(
        reuters[0]
    )
    assert fp.config_id != base.config_id
    with pytest.raises(ValueError, match="IDF table with digest"):
        Fingerprinter.from_config(fp.get_config())
    assert Fingerprinter.from_config(fp.get_config(), idf=loaded).config_id == fp.config_id


def test_idf_load_errors_name_file_and_line(tmp_path):
    path = tmp_path / "idf.tsv"
    path.write_text("# neardup idf table v1\n# n_docs=3\tdefault=1.5\nword\t2.0\nbroken line\n")
    with pytest.raises(ValueError, match=r"idf.tsv:4"):
        IdfTable.load(path)
    path.write_text("hello\n")
    with pytest.raises(ValueError, match="header"):
        IdfTable.load(path)
    with pytest.raises(FileNotFoundError, match="idf fit"):
        IdfTable.load(tmp_path / "missing.tsv")


def test_jieba_idf_table_weights_chinese():
    table = IdfTable.jieba()
    assert len(table) > 100_000
    assert "量子力学" in table.idf_ and "的" in table.idf_
    assert table["的"] < table["经济"] < table["量子力学"]  # common words weigh less
    fp = Fingerprinter(analyzer="word", weighting="tfidf", idf=table)
    assert fp.fingerprint(ZH) != Fingerprinter(analyzer="word").fingerprint(ZH)
    with pytest.raises(ValueError, match="'word' features"):
        Fingerprinter(analyzer="shingle", weighting="tfidf", idf=table)


def test_top_n_and_user_features():
    fp = Fingerprinter(top_n=3)
    assert len(fp.features(EN)) == 3
    assert fp.fingerprint(EN) == reference_fingerprint(fp, EN)
    user = Fingerprinter().fingerprint_features({"alpha": 2.0, "beta": 1.0})
    assert user == reference_fingerprint(
        Fingerprinter(analyzer=lambda t: {"alpha": 2.0, "beta": 1.0}), "x"
    )
    with pytest.raises(EmptyTextError):
        Fingerprinter().fingerprint_features({})
    with pytest.raises(ValueError, match="finite"):
        Fingerprinter().fingerprint_features({"a": float("nan")})


def test_callable_analyzer():
    fp = Fingerprinter(analyzer=str.split)
    assert fp.fingerprint("a b c") == Fingerprinter(analyzer="word").fingerprint("a b c")
    assert fp.get_config()["analyzer"].startswith("callable:")


def test_auto_analyzer_switches_by_script():
    fp = Fingerprinter(analyzer="auto")
    assert fp.feature_list("Oil prices rose on Monday") == [
        "oil prices rose",
        "prices rose on",
        "rose on monday",
    ]
    assert fp.feature_list("质量很好！物流快") == ["质量很好物", "量很好物流", "很好物流快"]
    # mostly Latin with a Han run: word shingles, the Han run segmented into words
    assert fp.feature_list("Apple sold many phones in 北京 this year")[-1] == "北京 this year"
    for text in ["质量很好！物流快", "Oil prices rose on Monday", MIXED, ZH]:
        assert fp.fingerprint(text) == reference_fingerprint(fp, text)
    assert fp.get_config()["cjk_ngram_size"] == 5
    assert "cjk_ngram_size" not in Fingerprinter(analyzer="word").get_config()
    assert Fingerprinter.from_config(fp.get_config()).config_id == fp.config_id


@pytest.mark.parametrize("markup", [False, True])
def test_fingerprint_packed_equals_fingerprint_many(markup: bool) -> None:
    # the dedup pipeline fingerprints slices of its packed prepared buffer; texts with Han
    # characters (segmented first) and markup fall back to the per-chunk path
    from neardup.features.normalize import pack_prepared

    words = ["Oil", "prices", "ROSE", "<b>bank</b>", "市场经济", "Ｆｅｄ", "straße", "", "!!"]
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(words, rng.integers(0, 30))) for _ in range(5000)]
    fp = Fingerprinter(markup=markup)
    want = fp.fingerprint_many(texts, return_mask=True)
    got = fp._fingerprint_packed(texts, pack_prepared(texts))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    ascii_only = [t for t in texts if t.isascii()]
    got = fp._fingerprint_packed(ascii_only, pack_prepared(ascii_only))
    assert np.array_equal(got[0], fp.fingerprint_many(ascii_only, return_mask=True)[0])
