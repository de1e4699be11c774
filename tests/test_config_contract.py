"""The configuration contract: parameters cannot change after construction, so ``config_id``
(stored next to every fingerprint, sketch, index and dedup state) cannot lie; a changed
configuration is a new object; objects survive the pickling that ships them to workers."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from neardup import Deduplicator, Fingerprinter, IdfTable, MinHashVerifier
from neardup.overlap import OverlapFinder

TEXTS = [
    "Crude oil prices rose sharply on Monday after OPEC ministers agreed to extend output cuts.",
    "国务院总理今天在北京会见了来访的法国外长，双方就两国关系交换了意见。",
    "the and of a to in",
]
# One value per parameter that differs from the default, to try to assign after construction.
NEW_VALUES: dict[type, dict[str, Any]] = {
    Fingerprinter: {
        "bits": 128,
        "analyzer": "word",
        "ngram_size": 2,
        "cjk_ngram_size": 3,
        "weighting": "tf",
        "idf": None,
        "stopwords": "en",
        "top_n": 3,
        "segmenter": None,
        "markup": True,
        "seed": 7,
    },
    MinHashVerifier: {
        "num_hashes": 64,
        "bits": 16,
        "ngram": 3,
        "mode": "word",
        "threshold": 0.5,
        "short_threshold": 0.9,
        "short_length": 10,
        "seed": 1,
        "band_ngram": 5,
    },
    Deduplicator: {
        "fingerprinter": Fingerprinter(stopwords="en"),
        "k": 3,
        "keep": "longest",
        "window": 60.0,
        "verifier": None,
        "threshold": 0.5,
        "cluster_similarity": 0.7,
        "candidate_k": 20,
        "index_design": 20,
        "n_jobs": 2,
        "preset": "edited",
    },
    OverlapFinder: {
        "ngram": 3,
        "window": 3,
        "min_length": 8,
        "gap": 20,
        "max_df": 40,
        "min_score": 0.5,
        "query_window": 1,
        "templates": "keep",
        "template_min_docs": 5,
        "max_seeds_per_gram": 8,
        "sources": "all",
        "max_sources": 4,
        "budget": "refuse",
    },
}


@pytest.mark.parametrize("cls", list(NEW_VALUES))
def test_every_parameter_is_listed(cls: type) -> None:
    assert sorted(cls._param_names()) == sorted(NEW_VALUES[cls])  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("cls", "name"), [(cls, name) for cls, values in NEW_VALUES.items() for name in values]
)
def test_assigning_a_parameter_raises_and_changes_nothing(cls: type, name: str) -> None:
    obj = cls()
    before = copy.copy(obj.__dict__)
    msg = rf"{cls.__name__}\.{name} is read-only: make a new object with \.replace\({name}="
    with pytest.raises(AttributeError, match=msg):
        setattr(obj, name, NEW_VALUES[cls][name])
    with pytest.raises(AttributeError, match="cannot be deleted"):
        delattr(obj, name)
    assert obj.__dict__.keys() == before.keys()
    assert all(obj.__dict__[key] is before[key] for key in before)


@pytest.mark.parametrize("cls", [Fingerprinter, OverlapFinder])
def test_declared_parameters_keep_the_constructor_contract(cls: type) -> None:
    """The parameters are declared once, as dataclass fields: the constructor stays
    keyword-only, an object stays equal to itself only and hashable (a config object may key a
    dict), ``get_params`` lists the parameters in their declared order, as given."""
    values = NEW_VALUES[cls]
    with pytest.raises(TypeError, match="positional"):
        cls(*list(values.values())[:1])
    a, b = cls(), cls()
    assert a != b and a == a and len({a: 1, b: 2}) == 2
    given = cls(**values)
    assert list(given.get_params()) == list(values)
    assert given.get_params() == values
    assert given.replace().config_id == given.config_id != a.config_id


def test_fingerprinter_mutation_cannot_make_config_id_lie() -> None:
    fp = Fingerprinter()
    fps, cid = fp.fingerprint_many(TEXTS[:2]), fp.config_id
    for name, value in NEW_VALUES[Fingerprinter].items():
        with pytest.raises(AttributeError):
            setattr(fp, name, value)
    for resolved in ("ngram_size_", "stopwords_"):
        with pytest.raises(AttributeError):
            setattr(fp, resolved, 1)
    with pytest.raises(AttributeError):
        fp.stopword = "en"  # type: ignore[attr-defined]  # a typo cannot add a silent attribute
    assert fp.config_id == cid == "fp1-636accae8e1a8ab5"
    assert (fp.fingerprint_many(TEXTS[:2]) == fps).all()


@pytest.mark.parametrize("name", [n for n in NEW_VALUES[Fingerprinter] if n != "idf"])
def test_replace_equals_construction(name: str) -> None:
    fp = Fingerprinter()
    new = fp.replace(**{name: NEW_VALUES[Fingerprinter][name]})
    direct = Fingerprinter(**{name: NEW_VALUES[Fingerprinter][name]})
    assert new.config_id == direct.config_id != fp.config_id
    assert getattr(new, name) == NEW_VALUES[Fingerprinter][name]
    assert fp.config_id == "fp1-636accae8e1a8ab5"  # the original is untouched


def test_replace_validates_and_names_unknown_parameters() -> None:
    with pytest.raises(ValueError, match="bits must be 64 or 128"):
        Fingerprinter().replace(bits=32)
    with pytest.raises(TypeError, match="no parameter 'stopword'"):
        Fingerprinter().replace(stopword="en")
    assert MinHashVerifier().replace(threshold=0.5).threshold == 0.5
    dd = Deduplicator(k=4, verifier=None)
    assert dd.replace(keep="longest").get_params() == {**dd.get_params(), "keep": "longest"}


def test_resolved_values_carry_a_trailing_underscore() -> None:
    fp = Fingerprinter(analyzer="char", stopwords=["The"])
    assert fp.ngram_size is None and fp.ngram_size_ == 5
    assert fp.stopwords == ("The",) and fp.stopwords_ == frozenset({"the"})
    words = ["a", "b"]
    given = Fingerprinter(stopwords=words)
    words.append("c")  # an iterable is stored as a tuple: changing the list changes nothing
    assert given.stopwords == ("a", "b")


def test_idf_table_is_read_only() -> None:
    table = IdfTable.from_document_frequencies({"oil": 1, "the": 3}, 3, analyzer="word")
    fp = Fingerprinter(analyzer="word", weighting="tfidf", idf=table)
    cid = fp.config_id
    with pytest.raises(TypeError):
        table.idf_["oil"] = 9.0  # type: ignore[index]
    for name in ("idf_", "default_", "n_docs_", "analyzer_", "keys_", "values_"):
        with pytest.raises(AttributeError):
            setattr(table, name, None)
    assert fp.config_id == cid
    assert table.replace(default=5.0).default_ == 5.0 and table.default_ != 5.0


@pytest.mark.parametrize(
    "fp",
    [
        Fingerprinter(),
        Fingerprinter(bits=128, analyzer="shingle", stopwords=["oil", "the"], seed=3),
        Fingerprinter(
            analyzer="word",
            weighting="tfidf",
            idf=IdfTable.from_document_frequencies({"oil": 1, "prices": 2}, 4, analyzer="word"),
        ),
    ],
    ids=["default", "128-custom", "tfidf"],
)
def test_pickle_round_trip_keeps_config_and_fingerprints(fp: Fingerprinter) -> None:
    blob = pickle.dumps(fp)
    back = pickle.loads(blob)
    assert back.config_id == fp.config_id
    a, ma = fp.fingerprint_many(TEXTS, return_mask=True)
    b, mb = back.fingerprint_many(TEXTS, return_mask=True)
    assert (a == b).all() and (ma == mb).all()
    with pytest.raises(AttributeError):
        back.seed = 1  # still frozen after the trip
    # cheap to ship: parameters and small derived arrays (the IDF table when there is one)
    assert len(blob) < 4096


def test_pickled_verifier_and_deduplicator_work_the_same() -> None:
    v = MinHashVerifier(num_hashes=32)
    back = pickle.loads(pickle.dumps(v))
    assert back == v and hash(back) == hash(v)
    assert (back.sketch_many(TEXTS) == v.sketch_many(TEXTS)).all()
    dd = Deduplicator(k=4, verifier=MinHashVerifier(num_hashes=32))
    clone = pickle.loads(pickle.dumps(dd))
    assert clone.get_params().keys() == dd.get_params().keys()
    first = dd.run(TEXTS + TEXTS[:1])
    second = clone.run(TEXTS + TEXTS[:1])
    assert first.statuses == second.statuses
    assert np.array_equal(first.cluster_id, second.cluster_id)


def test_worker_processes_give_the_same_fingerprints() -> None:
    fp = Fingerprinter(stopwords="en")
    texts = [f"{t} {i}" for i in range(3000) for t in TEXTS[:2]]
    assert (fp.fingerprint_many(texts, n_jobs=2) == fp.fingerprint_many(texts)).all()
