"""``neardup.dedup_table`` / ``DedupBatches`` / ``overlap_table`` on real pyarrow, Polars,
pandas and ``datasets`` objects built in memory: the columns equal the CLI's fields on the
same rows written to JSONL."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup
from neardup.cli import cli
from neardup.integrations.tables import DEDUP_COLUMNS
from neardup.overlap import OverlapFinder

from tests.overlap_texts import synthetic
from tests.synthetic import synthetic_corpus

KINDS = ("pyarrow", "polars", "pandas", "datasets")


def _docs(n: int = 160, seed: int = 3) -> list[dict[str, Any]]:
    return [{k: d[k] for k in ("id", "text", "ts")} for d in synthetic_corpus(n, seed=seed)]


def _as(kind: str, rows: list[dict[str, Any]]) -> Any:
    """``rows`` as a table of ``kind``, built in memory."""
    table = pa.Table.from_pylist(rows)
    if kind == "pyarrow":
        return table
    library = pytest.importorskip(kind)  # the extras neardup[tables] / neardup[datasets]
    if kind == "polars":
        return library.from_arrow(table)
    if kind == "pandas":
        return table.to_pandas()
    return library.Dataset.from_list(rows)


def _column(table: Any, name: str) -> list[Any]:
    """A column of any kind as Python values (pandas' nulls as None)."""
    if isinstance(table, pa.Table):
        return table.column(name).to_pylist()
    if type(table).__module__.startswith("polars"):
        return table.get_column(name).to_list()
    if type(table).__module__.startswith("pandas"):
        return pa.array(table[name], from_pandas=True).to_pylist()
    return table.with_format("arrow")[name].to_pylist()


def _cli(tmp_path: Path, rows: list[dict[str, Any]], command: str, *args: str) -> list[Any]:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    res = CliRunner().invoke(cli, [command, str(src), "--out", str(out), *args])
    assert res.exit_code == 0, res.output
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("kind", KINDS)
def test_dedup_table_equals_the_cli(tmp_path: Path, kind: str) -> None:
    rows = _docs()
    table = _as(kind, rows)
    out = neardup.dedup_table(table)
    assert type(out) is type(table)
    want = _cli(tmp_path, rows, "dedup")
    assert {r["status"] for r in want} >= {"unique", "duplicate", "exact_duplicate", "empty"}
    for name in DEDUP_COLUMNS:
        assert _column(out, name) == [r[name] for r in want], name
    assert _column(out, "text") == [r["text"] for r in rows]  # the input's columns kept


@pytest.mark.parametrize(
    ("options", "flags"),
    [
        ({"threshold": 0.5}, ["--threshold", "0.5"]),
        ({"keep": "longest"}, ["--keep", "longest"]),
        ({"time": "ts", "window": 2 * 86400.0}, ["--time-field", "ts", "--window", "2d"]),
        ({"id": None}, ["--id-field", "no_such_field"]),  # positions as ids
    ],
)
def test_dedup_table_options_equal_the_cli_flags(
    tmp_path: Path, options: dict[str, Any], flags: list[str]
) -> None:
    rows = _docs(seed=5)
    out = neardup.dedup_table(pa.Table.from_pylist(rows), **options)
    want = _cli(tmp_path, rows, "dedup", *flags)
    for name in DEDUP_COLUMNS:
        assert out.column(name).to_pylist() == [r[name] for r in want], name


def test_pyarrow_columns_are_shared_not_copied() -> None:
    table = pa.Table.from_pylist(_docs(40))
    out = neardup.dedup_table(table)
    assert out.column("text").chunk(0).buffers()[2].address == (
        table.column("text").chunk(0).buffers()[2].address
    )
    assert out.column("duplicate_of").type == table.column("id").type


@pytest.mark.parametrize(("batch_size", "arrow"), [(1, True), (7, True), (64, True), (64, False)])
def test_dataset_map_batches_equal_one_call(batch_size: int, arrow: bool) -> None:
    datasets = pytest.importorskip("datasets")
    rows = _docs(120, seed=8)
    ds = datasets.Dataset.from_list(rows).shuffle(seed=1)  # an indices mapping, too
    batches = neardup.DedupBatches(threshold=0.5)
    mapped = (ds.with_format("arrow") if arrow else ds).map(
        batches, batched=True, batch_size=batch_size
    )
    whole = neardup.dedup_table(ds, threshold=0.5)
    for name in DEDUP_COLUMNS:
        assert _column(mapped, name) == _column(whole, name), name
    shuffled = pa.Table.from_pylist([ds[i] for i in range(len(ds))])
    direct = neardup.dedup_table(shuffled, threshold=0.5)
    assert _column(whole, "status") == direct.column("status").to_pylist()
    assert batches.deduplicator.n_documents == len(rows)


def test_batches_refuse_keep_longest_and_both_ways_of_configuring() -> None:
    with pytest.raises(ValueError, match="keep='longest' needs all rows at once"):
        neardup.DedupBatches(keep="longest")
    with pytest.raises(ValueError, match="either deduplicator= or Deduplicator options"):
        neardup.DedupBatches(deduplicator=neardup.Deduplicator(), threshold=0.5)


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        ([{"body": "x"}], {}, r"no text column 'text' \(columns: body\); pass text="),
        ([{"text": "a"}, {"text": None}], {}, r"row 1: text column 'text' holds null"),
        ([{"text": "a", "id": 1}, {"text": "b", "id": None}], {}, r"row 1: id column 'id' is null"),
        ([{"text": "a", "t": "yesterday"}], {"time": "t"}, r"row 0: time column 't': cannot read"),
        ([{"text": "a"}], {"time": "t"}, r"no time column 't'"),
        ([{"text": "a", "status": "x"}], {}, r"already has column\(s\) status"),
        ([{"text": "a"}], {"window": 60.0}, r"window= needs each row's time: pass time="),
        ([{"text": "a"}], {"keep": "newest"}, r"keep='newest' needs each row's time"),
    ],
)
def test_bad_tables_are_refused_naming_row_and_fix(
    rows: list[dict[str, Any]], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        neardup.dedup_table(pa.Table.from_pylist(rows), **options)


def test_a_bad_row_of_a_later_batch_is_named_by_its_place_in_the_stream() -> None:
    batches = neardup.DedupBatches()
    batches({"text": ["a", "b", "c"]})
    with pytest.raises(ValueError, match=r"row 4: text column 'text' holds int"):
        batches({"text": ["d", 5]})


def test_other_objects_are_refused_naming_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="expected a pyarrow Table, a Polars or pandas"):
        neardup.dedup_table([{"text": "a"}])


def _overlap_rows() -> list[dict[str, Any]]:
    return [
        {"id": i, "text": t, "day": f"2026-01-{30 - n:02d}"}
        for n, (i, t) in enumerate(synthetic(seed=11, n=16))
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("time", [None, "day"])
def test_overlap_table_equals_the_cli(tmp_path: Path, kind: str, time: str | None) -> None:
    rows = _overlap_rows()
    out = neardup.overlap_table(_as(kind, rows), time=time)
    want = _cli(tmp_path, rows, "overlap", *(["--time-field", time] if time else []))
    assert want  # the synthetic texts do copy
    want = [{**w, "template": False} for w in want]  # the table's flag (templates dropped)
    got = [
        {"id": r["id"], **p}
        for r, ps in zip(rows, _column(out, "passages"), strict=True)
        for p in ps or []
    ]
    key = lambda r: (r["id"], r["span"], r["source_id"], r["source_span"])  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)


def test_overlap_table_against_a_reference_equals_cli_against(tmp_path: Path) -> None:
    rows = _overlap_rows()
    refs, queries = rows[:8], rows[8:]
    finder = OverlapFinder()
    for r in refs:
        finder.add(r["text"], r["id"])
    out = neardup.overlap_table(pa.Table.from_pylist(queries), finder=finder, add=False)
    ref = tmp_path / "ref.jsonl"
    ref.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refs), "utf-8")
    want = _cli(tmp_path, queries, "overlap", "--against", str(ref))
    assert want and len(finder) == len(refs)  # looked up, not added
    want = [{**w, "template": False} for w in want]
    got = [
        {"id": r["id"], **p}
        for r, ps in zip(queries, out.column("passages").to_pylist(), strict=True)
        for p in ps
    ]
    assert got == want


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_overlap_table_strip_equals_cli_strip(tmp_path: Path, kind: str) -> None:
    rows = _overlap_rows()
    out = neardup.overlap_table(_as(kind, rows), strip=True, strip_min_length=60)
    clean = tmp_path / "clean.jsonl"
    _cli(tmp_path, rows, "overlap", "--strip", str(clean), "--strip-min-length", "60")
    want = [json.loads(line) for line in clean.open("rb")]
    assert sum(r["stripped_chars"] for r in want) > 0
    assert _column(out, "stripped_text") == [r["text"] for r in want]
    assert _column(out, "stripped_chars") == [r["stripped_chars"] for r in want]
    assert _column(out, "text") == [r["text"] for r in rows]  # the input's text as it was


# the strip's settings: overlap_table's keywords and the CLI's flags (templates are cut when
# asked, or when the report holds them: --templates keep)
STRIP_SETTINGS = [
    ({}, []),
    ({"strip_templates": False}, ["--strip-copies-only"]),
    ({"strip_templates": True}, ["--strip-templates"]),
    ({"templates": "keep"}, ["--templates", "keep"]),
]


@pytest.mark.parametrize(("asked", "flags"), STRIP_SETTINGS)
def test_overlap_table_strip_templates_equals_the_cli(
    tmp_path: Path, asked: dict[str, Any], flags: list[str]
) -> None:
    """The default and every setting on a collection with templates: the texts, the
    characters removed and those of templates as ``neardup overlap --strip`` writes them."""
    from tests.overlap_texts import templated

    rows = [{"id": i, "text": t} for i, t in templated(n=40)]
    out = neardup.overlap_table(pa.Table.from_pylist(rows), strip=True, **asked)
    clean = tmp_path / "clean.jsonl"
    _cli(tmp_path, rows, "overlap", "--strip", str(clean), *flags)
    want = [json.loads(line) for line in clean.open("rb")]
    assert sum(r["stripped_chars"] for r in want) > 0
    assert _column(out, "stripped_text") == [r["text"] for r in want]
    assert _column(out, "stripped_chars") == [r["stripped_chars"] for r in want]
    cut = "--strip-templates" in flags or "keep" in flags  # templates stay in by default
    assert ("stripped_template_chars" in out.column_names) == cut
    assert all(("stripped_template_chars" in r) == cut for r in want)
    if cut:
        by_templates = [r["stripped_template_chars"] for r in want]
        assert _column(out, "stripped_template_chars") == by_templates and sum(by_templates)


_ROWS = _docs(60, seed=9)
_WHOLE = neardup.dedup_table(pa.Table.from_pylist(_ROWS), threshold=0.5)


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(0, len(_ROWS)), max_size=6))
def test_any_batching_gives_the_decisions_of_one_call(cuts: list[int]) -> None:
    batches = neardup.DedupBatches(threshold=0.5)
    bounds = [0, *sorted(cuts), len(_ROWS)]
    got: dict[str, list[Any]] = {n: [] for n in DEDUP_COLUMNS}
    for a, b in itertools.pairwise(bounds):
        out = batches(pa.Table.from_pylist(_ROWS[a:b]) if b > a else pa.table({"text": []}))
        for n in DEDUP_COLUMNS:
            got[n] += out.column(n).to_pylist()
    for n in DEDUP_COLUMNS:
        assert got[n] == _WHOLE.column(n).to_pylist(), n


def test_overlap_table_carries_the_template_flag_as_the_cli(tmp_path: Path) -> None:
    from tests.overlap_texts import templated

    rows = [{"id": i, "text": t} for i, t in templated(n=40)]
    out = neardup.overlap_table(pa.Table.from_pylist(rows), templates="keep")
    want = _cli(tmp_path, rows, "overlap", "--templates", "keep")
    got = [
        {"id": r["id"], **p}
        for r, ps in zip(rows, out.column("passages").to_pylist(), strict=True)
        for p in ps
    ]
    assert got == want
    assert any(w["template"] for w in want) and not all(w["template"] for w in want)
