"""IdfTable: fit, from_document_frequencies, save/load, against the smoothed-IDF formula."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import Fingerprinter, IdfTable

docs = st.lists(
    st.lists(st.sampled_from(["oil", "gas", "rates", "bank", "的", "ΣΑΣ"]), max_size=6).map(
        " ".join
    ),
    min_size=1,
    max_size=12,
)


def smoothed_idf(df: int, n: int) -> float:
    """scikit-learn's smooth_idf: ln((1 + n) / (1 + df)) + 1."""
    return math.log((1 + n) / (1 + df)) + 1


@settings(max_examples=100, deadline=None)
@given(docs, st.integers(1, 3))
def test_fit_equals_from_document_frequencies_and_the_formula(
    texts: list[str], min_df: int
) -> None:
    df = Counter(w for t in texts for w in set(t.split()))
    table = IdfTable.fit(texts, analyzer=str.split, min_df=min_df)
    again = IdfTable.from_document_frequencies(df, len(texts), min_df=min_df)
    assert table.digest == again.digest and dict(table.idf_) == dict(again.idf_)
    assert set(table.idf_) == {w for w, c in df.items() if c >= min_df}
    for w, c in df.items():
        want = smoothed_idf(c, len(texts)) if c >= min_df else smoothed_idf(0, len(texts))
        assert table[w] == pytest.approx(want)
    assert table.default_ == pytest.approx(smoothed_idf(0, len(texts)))
    assert table.n_docs_ == len(texts)


@settings(max_examples=30, deadline=None)
@given(docs)
def test_save_load_round_trip(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> None:
    table = IdfTable.fit(texts, analyzer=str.split, analyzer_name="word")
    path = tmp_path_factory.mktemp("idf") / "idf.tsv"
    table.save(path)
    back = IdfTable.load(path)
    assert back.digest == table.digest and back.analyzer_ == "word"
    assert dict(back.idf_) == dict(table.idf_)


def test_from_document_frequencies_for_counts_made_elsewhere(tmp_path: Path) -> None:
    table = IdfTable.from_document_frequencies(
        {"oil": 10, "prices": 2, "rare": 1}, 10, min_df=2, analyzer="word"
    )
    assert sorted(table.idf_) == ["oil", "prices"]
    assert table["oil"] == pytest.approx(1 + math.log(11 / 11))
    assert table["rare"] == table.default_ == pytest.approx(1 + math.log(11))
    fp = Fingerprinter(analyzer="word", weighting="tfidf", idf=table)
    weights = fp.features("oil prices oil")
    assert weights == pytest.approx({"oil": 2 * table["oil"], "prices": table["prices"]})
    with pytest.raises(ValueError, match="weighs 'shingle:3' features"):
        Fingerprinter(
            analyzer="word",
            weighting="tfidf",
            idf=IdfTable.from_document_frequencies({"a": 1}, 1, analyzer="shingle:3"),
        )
    with pytest.raises(ValueError, match="finite"):
        IdfTable({"a": float("nan")}, default=1.0)
    with pytest.raises(ValueError, match="no texts"):
        IdfTable.fit([], analyzer=str.split)
