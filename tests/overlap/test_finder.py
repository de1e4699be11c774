"""OverlapFinder on synthetic English and Chinese text: spans, sources, save/load, errors."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from neardup._backend import overlap_kernels
from neardup.overlap import (
    OverlapFinder,
    ReferenceConfigError,
    ReferenceFormatError,
    SeedBudgetError,
)

_HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def _english(rng: random.Random, words: int) -> str:
    sents = []
    while words > 0:
        n = min(words, rng.randint(8, 16))
        ws = [
            "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9)))
            for _ in range(n)
        ]
        sents.append(" ".join(ws).capitalize() + ".")
        words -= n
    return " ".join(sents)


def _chinese(rng: random.Random, chars: int) -> str:
    out = []
    while chars > 0:
        n = min(chars, rng.randint(10, 25))
        out.append("".join(rng.choices(_HAN, k=n)) + "。")
        chars -= n
    return "".join(out)


def _covers(span: tuple[int, int], want: tuple[int, int], slack: int) -> bool:
    return span[0] <= want[0] + slack and span[1] >= want[1] - slack


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_copied_passage_is_found_with_covering_spans(seed: int, lang: str) -> None:
    rng = random.Random(seed)
    make = _english if lang == "en" else _chinese
    size = 120 if lang == "en" else 300
    a = make(rng, size)
    start = rng.randrange(len(a) // 3)
    passage = a[start : start + len(a) // 2]
    head = make(rng, size // 2) + (" " if lang == "en" else "")
    b = head + passage + (" " if lang == "en" else "") + make(rng, size // 2)
    noise = [make(rng, size) for _ in range(3)]
    f = OverlapFinder()
    found = f.find([noise[0], a, noise[1], b, noise[2]], ids=["n0", "a", "n1", "b", "n2"])
    assert found, "the copied passage was not found"
    assert {(p.id, p.source_id) for p in found} == {("b", "a")}
    [p] = found
    slack = 12  # the passage's cut words at both ends need not be aligned
    assert _covers(p.span, (len(head), len(head) + len(passage)), slack), (p.span, len(head))
    assert _covers(p.source_span, (start, start + len(passage)), slack)
    # offsets are code points into the texts as read: the spans show the same text
    assert b[p.span[0] : p.span[1]] == a[p.source_span[0] : p.source_span[1]]
    assert p.score == 1.0
    assert p.span[1] - p.span[0] <= len(passage) + 2 * slack


def test_source_is_the_earlier_document_by_time() -> None:
    rng = random.Random(7)
    a = _english(rng, 80)
    b = _english(rng, 30) + " " + a[:300]
    found = OverlapFinder().find([a, b], ids=["a", "b"], timestamps=[5.0, 1.0])
    assert [(p.id, p.source_id) for p in found] == [("a", "b")]


def test_unrelated_documents_give_nothing() -> None:
    rng = random.Random(3)
    texts = [_english(rng, 150) for _ in range(20)] + [_chinese(rng, 400) for _ in range(20)]
    assert OverlapFinder().find(texts) == []


def test_mixed_and_full_width_text_is_found() -> None:
    rng = random.Random(11)
    zh = _chinese(rng, 200)
    a = "Report 2024 年度 " + zh
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in "Report 2024")
    b = "前言。" + wide + " 年度 " + zh[:150]
    [p] = OverlapFinder().find([a, b])
    assert p.source_id == 0 and p.span[1] - p.span[0] >= 150
    assert p.span[0] <= len("前言。") + len(wide)


def test_short_shared_phrase_below_min_length_is_not_reported() -> None:
    rng = random.Random(5)
    phrase = "the committee approved the new budget"  # 6 words < min_length 12
    a = _english(rng, 60) + " " + phrase + " " + _english(rng, 60)
    b = _english(rng, 60) + " " + phrase + " " + _english(rng, 60)
    assert OverlapFinder().find([a, b]) == []
    assert OverlapFinder(min_length=5, ngram=3, window=2).find([a, b]) != []


def test_save_load_round_trips_and_refuses_other_config(tmp_path: Path) -> None:
    rng = random.Random(2)
    refs = [_english(rng, 100) for _ in range(5)] + [_chinese(rng, 300)]
    f = OverlapFinder(min_length=10)
    for i, t in enumerate(refs):
        f.add(t, id=f"r{i}")
    query = _english(rng, 20) + " " + refs[3][50:450]
    before = f.query(query, id="q")
    f.save(tmp_path / "ref")
    g = OverlapFinder.load(tmp_path / "ref")
    assert g.config_id == f.config_id and len(g) == len(refs)
    assert g.query(query, id="q") == before and [p.source_id for p in before] == ["r3"]
    zq = refs[5][20:200]
    assert [p.source_id for p in g.query(zq)] == ["r5"]
    with pytest.raises(ReferenceConfigError) as e:
        OverlapFinder.load(tmp_path / "ref", OverlapFinder(min_length=11))
    assert f.config_id in str(e.value) and OverlapFinder(min_length=11).config_id in str(e.value)
    assert "other overlap parameters: use the saved parameters" in str(e.value)
    with pytest.raises(ReferenceFormatError, match="not a saved overlap reference"):
        OverlapFinder.load(tmp_path / "missing")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ngram": 0}, "ngram"),
        ({"gap": -1}, "gap"),
        ({"min_score": 2.0}, "min_score"),
        ({"max_df": 0}, "max_df"),
        ({"query_window": 0}, "query_window"),
        ({"query_window": 5}, r"query_window must be an integer in \[1, window=4\]"),
        ({"window": 2, "query_window": 3}, "query_window"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OverlapFinder(**kwargs)  # type: ignore[arg-type]


def test_bad_input_is_refused() -> None:
    f = OverlapFinder()
    with pytest.raises(TypeError, match="text must be a str"):
        f.add(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 ids for 1 texts"):
        f.find(["x"], ids=["a", "b"])
    with pytest.raises(ValueError, match="timestamps"):
        f.find(["x"], timestamps=[1.0, 2.0])


def test_repeated_phrase_inside_a_copy_is_not_a_second_passage() -> None:
    """A phrase that the source also holds earlier gives no second passage pointing there
    (aligner 3: a passage inside a longer one of the same pair is dropped)."""
    rng = random.Random(7)
    phrase = "the provincial committee elected its new vice chairmen at the session"
    before = _english(rng, 40)
    passage = _english(rng, 30) + " " + phrase + " " + _english(rng, 30)
    source = before + " " + phrase + ". " + _english(rng, 45) + " " + passage
    query = _english(rng, 30) + " " + passage + " " + _english(rng, 30)
    found = OverlapFinder().find([source, query])
    at = source.index(passage)
    assert len(found) == 1, found
    assert abs(found[0].source_span[0] - at) <= 5 and _covers(
        found[0].source_span, (at, at + len(passage)), 5
    )


def test_phrase_repeated_after_the_copy_does_not_stretch_the_source_span() -> None:
    """The source repeats a phrase of the copied passage a few words after it: the source
    span still ends where the copy ends (aligner 3: the ends come from the seeds on the
    passage's diagonals)."""
    rng = random.Random(11)
    passage = _english(rng, 40)
    words = passage.split()
    phrase = " ".join(words[10:17])
    source = _english(rng, 30) + " " + passage + " " + _english(rng, 8) + " " + phrase + ". "
    source += _english(rng, 30)
    query = _english(rng, 30) + " " + passage + " " + _english(rng, 30)
    [p] = OverlapFinder().find([source, query])
    at = source.index(passage)
    assert abs(p.source_span[1] - (at + len(passage))) <= 5, (p.source_span, at + len(passage))


def test_query_window_is_in_the_config_id_as_it_runs() -> None:
    """``query_window=None`` runs 2 (or a smaller ``window``): the same id as naming it."""
    base = OverlapFinder()
    assert base.query_window_ == 2 and OverlapFinder(query_window=2).config_id == base.config_id
    assert OverlapFinder(window=1).query_window_ == 1
    assert OverlapFinder(query_window=1).config_id != base.config_id
    assert OverlapFinder(query_window=4).config_id != base.config_id


def test_the_seed_budget_is_in_the_config_id_where_it_decides_the_passages() -> None:
    """Refusing leaves the passages as they are (or refuses): ``budget`` and, refusing,
    ``max_seeds_per_gram`` are not in the id; trimming with another bound than 16 leaves out
    other grams, so that bound is (16 keeps the ids of the references saved before)."""
    base = OverlapFinder()
    assert OverlapFinder(budget="refuse").config_id == base.config_id
    assert OverlapFinder(budget="refuse", max_seeds_per_gram=64).config_id == base.config_id
    assert OverlapFinder(max_seeds_per_gram=64).config_id != base.config_id
    with pytest.raises(ValueError, match="budget must be one of"):
        OverlapFinder(budget="skip")


def test_a_reference_of_another_version_is_refused_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same parameters, another aligner (an earlier neardup wrote it): the message says to
    rebuild, not to use the saved parameters (which give this version's config again)."""
    import neardup.overlap.finder as finder_module

    with monkeypatch.context() as m:
        m.setattr(finder_module, "ALIGNER_VERSION", finder_module.ALIGNER_VERSION - 1)
        old = OverlapFinder(min_length=10)
        old.add("one two three four five six seven eight nine ten eleven twelve", id="a")
        old.save(tmp_path / "ref")
    for config in (None, OverlapFinder(min_length=10)):
        with pytest.raises(ReferenceConfigError) as e:
            OverlapFinder.load(tmp_path / "ref", config)
        assert old.config_id in str(e.value) and OverlapFinder(min_length=10).config_id in str(
            e.value
        )
        assert "another neardup version" in str(e.value) and "--save-reference" in str(e.value)


@pytest.mark.parametrize("kernels", ["c", "python"])
@pytest.mark.parametrize("repeats", [40, 60, 200])
def test_a_copy_of_a_repetitive_text_is_found(
    repeats: int, kernels: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text repeating one sentence more often than ``max_df`` (50), copied verbatim into a
    later one, is found whole: ``max_df`` counts the documents posting a gram (one here), not
    its postings (issue 40: 0 passages past ~50 repeats), on the C index and the Python one."""
    if kernels == "python":
        monkeypatch.setenv("NEARDUP_KERNELS", "python")
    elif overlap_kernels() is None:
        pytest.skip("neardup._overlap not built")
    overlap_kernels.cache_clear()
    try:
        sentence = "The committee met again on Tuesday to discuss the budget for the parks. "
        f = OverlapFinder()
        f.add("Weather and sports in town today, nothing else of note.", id="x")
        f.add(sentence * repeats, id="a")
        text = "Intro words here. " + sentence * repeats + "Outro."
        found = f.add(text, id="b")
        assert [(p.source_id, p.score) for p in found] == [("a", 1.0)]
        assert _covers(found[0].span, (18, 18 + len(sentence * repeats) - 1), 5)
    finally:
        monkeypatch.delenv("NEARDUP_KERNELS", raising=False)
        overlap_kernels.cache_clear()


@pytest.mark.skipif(overlap_kernels() is None, reason="the bound is on the C kernel's work")
def test_a_text_of_five_words_repeated_and_copied_is_found_in_bounded_work() -> None:
    """3 * 10^5 characters of five words in random order, copied into another document: every
    gram recurs (1.9 * 10^6 seeds), over the default seed budget: ``budget="refuse"`` refuses
    it, naming the numbers; the default looks it up without its grams of more than 16
    postings (counted) and finds it whole, as does the budget raised. The merge of its ~10^5
    diagonal groups compared every pair of them (51 s on a loaded 2-core machine); bounded by
    20 s here, ~2 s now."""
    rng = random.Random(7)
    text = " ".join(rng.choices(["alpha", "beta", "gamma", "delta", "eps"], k=56_000))
    assert len(text) > 300_000
    query = "Intro. " + text + " outro."
    f = OverlapFinder(budget="refuse")
    f.add(text, "src")
    with pytest.raises(SeedBudgetError) as refused:
        f.query(query, "copy")
    assert refused.value.seeds > refused.value.limit == 16 * 65_536
    assert "more than max_seeds_per_gram=16 a gram allows" in str(refused.value)
    trimmed = OverlapFinder()
    trimmed.add(text, "src")
    [p] = trimmed.query(query, "copy")
    assert trimmed.over_budget_texts == (1, ["copy"])
    assert (p.source_id, p.score, p.span[0]) == ("src", 1.0, 7), p
    f = OverlapFinder(max_seeds_per_gram=64)
    f.add(text, "src")
    start = time.perf_counter()
    [p] = f.query(query, "copy")
    assert time.perf_counter() - start < 20 and f.over_budget_texts == (0, [])
    # an end comes from the outermost seed on the passage's diagonals, extended while the
    # texts agree: where every diagonal holds seeds it may be off the copy's, a few words short
    assert p.source_id == "src" and p.score == 1.0
    assert abs(p.span[0] - 7) + abs(p.span[1] - 7 - len(text)) <= 60, p.span
    assert p.source_span[0] + len(text) - p.source_span[1] <= 60, p.source_span
