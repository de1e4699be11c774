"""``neardup overlap``: passages copied between documents, one output row per passage pair."""

from __future__ import annotations

import dataclasses
import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import click

from neardup import _fs
from neardup._atomic import BrokenDirectoryError, current_version
from neardup.cli._common import (
    DataError,
    ReadOptions,
    check_inputs,
    disk_errors,
    document_records,
    engine_options,
    materialized_stdin,
    nothing_read_error,
    output_path_or_usage_error,
    read_notes,
    read_options,
    usage_error,
)
from neardup.cli._overlap_write import DocumentPassages, write_found, write_rows
from neardup.cli._strip_write import Spans, strip_options, write_stripped
from neardup.io import (
    Document,
    InputError,
    ReadStats,
)
from neardup.io.partitions import partition_values, root_of
from neardup.io.readers import iter_part_records
from neardup.io.writers import needs_utf8
from neardup.overlap import OverlapFinder, ReferenceFormatError, SeedBudgetError
from neardup.overlap.finder import BUDGET_MODES, TEMPLATE_MODES
from neardup.overlap.pairs import SOURCE_MODES
from neardup.overlap.strip import cuts_templates, merged_spans, split_templates
from neardup.spark.cli import EngineDataError, parse_spark_conf, refuse_urls

EXAMPLES = """
\b
Examples:
  neardup overlap posts.jsonl --out passages.jsonl
  neardup overlap answers.jsonl --against wiki.jsonl --save-reference ref/ --out hits.jsonl
  neardup overlap today.jsonl --against ref/ --out hits.csv    # a saved reference directory
  neardup overlap parts/ --engine spark --out passages.jsonl   # same passages, on Spark
  neardup overlap posts.jsonl --out passages.jsonl --strip clean.jsonl  # + texts less copies

\b
Each output row: id, span [start, end), source_id, source_span, score (share of the passage's
word grams found in the source passage), chars. Spans are code points into the texts as read;
the source is the earlier document (input order, or --time-field). Exit codes as for dedup.
"""


@dataclass
class _Read:
    """How inputs are read (the same options as ``dedup``)."""

    fmt: str | None
    text_field: str
    id_field: str
    time_field: str | None
    on_error: str
    epoch_unit: str
    utf8_ids: bool = False  # --out is CSV or Parquet: ids with lone surrogates are bad rows
    stats: ReadStats = field(default_factory=lambda: ReadStats(track_ids=True))
    ref_stats: ReadStats = field(default_factory=ReadStats)  # --against files
    roots: tuple[str, ...] = ()  # the inputs as given: folders whose parts these are
    parts: dict[int, dict[str, Any]] = field(default_factory=dict)  # position -> partition values
    against: tuple[str, ...] = ()  # --against as given (Spark: folders of reference parts)

    def documents(self, paths: tuple[str, ...]) -> Iterator[Document]:
        """The documents of ``paths``; with partition columns (``month=10/`` folders) their
        values go to :attr:`parts` by document position."""
        names = partition_names(paths, self.roots)
        rows = chain.from_iterable(
            iter_part_records(p, root_of(p, self.roots), self.fmt) for p in paths
        )
        for doc, rec in document_records(self, rows, self.stats):
            if names:
                self.parts[doc.position] = {n: rec.get(n) for n in names}
            yield doc


ROW_FIELDS = ("id", "span", "source_id", "source_span", "score", "chars", "closest_id",
              "closest_span", "closest_score", "template")  # fmt: skip


def partition_names(paths: tuple[str, ...], roots: tuple[str, ...]) -> tuple[str, ...]:
    """The Hive partition columns of the parts ``paths`` listed from the folders ``roots``
    (in order of appearance), except names of the output's own fields: each output row
    carries the values of its document (``id``), as dedup's rows carry them."""
    names: dict[str, None] = {}
    for p in paths:
        root = root_of(p, roots)
        if root is not None:
            names.update(dict.fromkeys(partition_values(root, p)))
    return tuple(n for n in names if n not in ROW_FIELDS)


# the OverlapFinder's parameters as options, in their --help order: (name, type, help); each
# defaults to None, the finder's own default (given in brackets); the choices are the finder's
# SOURCE_MODES and TEMPLATE_MODES, not copies
FINDER_OPTIONS: tuple[tuple[str, click.ParamType[Any, Any], str], ...] = (
    ("min-score", click.FloatRange(0, 1), "Drop passages scoring below this. Start from 0: 0.3 "
     "already loses most heavy rewrites (a quarter of the words edited), 0.5 keeps "
     "near-verbatim copies only (docs/OVERLAP.md) [0]."),
    ("max-sources", click.IntRange(2), "With --sources all: the most sources per passage (the "
     "earliest and the closest kept, the rest counted in the summary) [16]."),
    ("sources", click.Choice(SOURCE_MODES), "Which sources a copied passage names: its "
     "earliest (the original: by --time-field, else input order), with the closest beside it "
     "when that is another document (original); the closest only (best); every earlier "
     "document holding it or an edited copy of a part of it, one row each (all, at most "
     "--max-sources) [original]."),
    ("templates", click.Choice(TEMPLATE_MODES), "Templates of the collection (bylines, "
     "datelines, quote headers, signatures, rows of figures) and short common phrases: set "
     "aside and counted in the summary (drop), or reported (keep) [drop]."),
    ("template-min-docs", click.IntRange(2), "A passage is a template when most of its grams, "
     "digits masked, are in this many earlier documents and it is short or a row of figures, "
     "or when what its two sides share is a frame held by half as many with slots filled in; "
     "higher sets fewer aside [10]."),
    ("max-seeds-per-gram", click.IntRange(0), "A text whose grams find more postings than "
     "this many a gram (of at least 65,536 grams) is over its seed budget: a text of a few "
     "words repeated finds a number, and costs a time, that grow with the square of its "
     "length [16]."),
    ("budget", click.Choice(BUDGET_MODES), "A text over its seed budget: looked up without "
     "its grams that find more than --max-seeds-per-gram postings, counted and named in the "
     "summary (trim), or the run stops naming it (refuse) [trim]."),
    ("query-window", click.IntRange(0), "Winnowing window of a text's look-ups, 1-4 (1: look "
     "up every gram: a little more recall on heavy rewrites, a cost that grows with the "
     "reference) [2]."),
    ("gap", click.IntRange(0), "Largest gap in words between the seeds of one passage [30]."),
    ("ngram", click.IntRange(0), "Words per hashed gram [4]."),
    ("min-length", click.IntRange(0), "Shortest passage reported, in words (a Han character "
     "counts 2/3) [10]."),
)  # fmt: skip


def _finder_options(func: Any) -> Any:
    """The options of :data:`FINDER_OPTIONS` (applied last first: click lists them in the
    order they are applied in reverse)."""
    for name, type_, help_ in reversed(FINDER_OPTIONS):
        func = click.option(f"--{name}", type=type_, default=None, help=help_)(func)
    return func


def _saved(path: str) -> bool:
    """Whether ``path`` is a saved reference directory; one whose ``CURRENT`` is missing or
    names a gone version is refused as --state is (the file, and the ``echo`` that mends it),
    not read as a folder of input parts."""
    if not _fs.isdir(path):
        return False
    try:
        current_version(path)
    except BrokenDirectoryError as exc:
        raise DataError(f"--against {path}: {exc}") from None
    except OSError:
        return False
    return True


def _build(params: dict[str, Any], against: tuple[str, ...], read: _Read) -> OverlapFinder:
    """The finder: loaded from a saved reference, or with ``params``, holding ``against``."""
    try:
        config = OverlapFinder(**params)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    saved = [p for p in against if _saved(p)]
    if len(saved) > 1 or (saved and len(against) > 1):
        raise usage_error("--against takes one saved reference directory, or input files")
    if saved:
        try:
            return OverlapFinder.load(saved[0], config if params else None)
        except ReferenceFormatError as exc:
            raise usage_error(str(exc)) from None
    finder = config
    if against:
        # ids apart from INPUT's; the reference's own partition columns
        ref_read = dataclasses.replace(read, stats=read.ref_stats, parts={}, roots=against)
        refs = sorted(ref_read.documents(check_inputs(against, read.fmt)), key=_order)
        for doc in refs:
            finder.add(doc.text, doc.id)
    return finder


def _order(doc: Document) -> tuple[float, int]:
    return (doc.timestamp if doc.timestamp is not None else 0.0, doc.position)


@click.command("overlap", epilog=EXAMPLES)
@read_options("Timestamp field (as for dedup): the earlier document is the source.")
@click.option("--against", multiple=True, help="Reference files (or one saved reference "
              "directory): check INPUT against these only. Repeatable.")  # fmt: skip
@click.option("--save-reference", default=None, type=click.Path(file_okay=False),
              help="Save the reference (--against, else INPUT) here for --against.")  # fmt: skip
@_finder_options
@strip_options
@engine_options
def overlap_command(
    reading: ReadOptions,
    against: tuple[str, ...],
    save_reference: str | None,
    engine: str,
    spark_master: str | None,
    spark_conf: tuple[str, ...],
    strip_out: str | None,
    strip_min_length: int,
    strip_templates: bool,
    **finder_params: Any,
) -> None:
    """Find passages that documents share and write one row per passage pair.

    INPUT is a file, a folder of parts or of .txt files, or - (stdin). A summary goes to
    stderr.
    """
    inputs, out = reading.inputs, reading.out
    files = check_inputs(inputs, reading.fmt)
    output_path_or_usage_error(out, inputs + files)
    _check_strip(strip_out, out, inputs + files, engine)
    params = {k: v for k, v in finder_params.items() if v is not None}
    read = _Read(reading.fmt, reading.text_field, reading.id_field, reading.time_field,
                 reading.on_error, reading.epoch_unit, needs_utf8(out), roots=inputs)  # fmt: skip
    start = time.perf_counter()
    if engine == "spark":
        _on_spark(params, files, (against, save_reference), out, read, (spark_master, spark_conf))
        return
    with materialized_stdin(files) as paths:
        asked = strip_templates if strip_out is not None else None
        finder, got = _find_local(params, against, read, paths, asked)
        if read.stats.documents == 0 and read.stats.skipped:
            raise nothing_read_error(read.stats)
        strip = (strip_out, strip_min_length)
        stripped, by_templates, notes = _write_local(
            finder, got, (out, save_reference), read, paths, strip
        )
    pairs = sum(len(passages) for passages, _ in got.found)
    secs = time.perf_counter() - start
    _summary(got.documents, got.against, got.with_copies, pairs, got.share, secs)
    if strip_out is not None:
        kept = got.cut is None and finder.templates_set_aside[0] > 0
        _strip_summary(stripped, by_templates, kept, strip_out)
    _templates_note(*finder.templates_set_aside)
    _sources_note(finder.sources_cut, finder.max_sources)
    _budget_note(*finder.over_budget_texts, finder.max_seeds_per_gram)
    _notes(read, notes, read.stats, read.ref_stats)


@dataclass
class _Passages:
    """What a local run found: documents read, every document's passages, documents with a
    passage, share of the text copied; the copy-side spans for ``--strip`` (``spans``, and
    the templates' apart in ``cut`` when they are cut too); ``against``: the summary's words
    on the reference (empty without --against)."""

    documents: int
    found: DocumentPassages
    with_copies: int
    share: float
    spans: Spans
    cut: Spans | None
    against: str


def _find_local(
    params: dict[str, Any],
    against: tuple[str, ...],
    read: _Read,
    paths: tuple[str, ...],
    strip_templates: bool | None,
) -> tuple[OverlapFinder, _Passages]:
    """The finder (holding the reference) and the passages of the documents of ``paths``,
    in time order with a time field (``strip_templates``: --strip-templates, None without
    --strip; when --strip cuts templates, :func:`cuts_templates`, their spans are kept
    apart); bad input rows and a text over the seed budget are bad data."""
    try:
        finder = _build(params, against, read)
        ref = f" against {len(finder):,} reference documents" if against else ""
        docs = read.documents(paths)
        if read.time_field:
            docs = iter(sorted(docs, key=_order))
        spans: Spans = {}
        cut_templates = strip_templates is not None and cuts_templates(
            strip_templates, finder.templates
        )
        cut: Spans | None = {} if cut_templates else None
        n_docs, found, with_copies, share = _run(finder, docs, not against, read, spans, cut)
    except InputError as exc:
        raise DataError(str(exc)) from None
    except SeedBudgetError as exc:
        raise DataError(f"{exc} (--max-seeds-per-gram N)") from None
    return finder, _Passages(n_docs, found, with_copies, share, spans, cut, ref)


def _write_local(
    finder: OverlapFinder,
    got: _Passages,
    outputs: tuple[str, str | None],
    read: _Read,
    paths: tuple[str, ...],
    strip: tuple[str | None, int],
) -> tuple[int, int, list[str]]:
    """Save the reference (``outputs``: --out and --save-reference), write the cleaned texts
    (``strip``: --strip and --strip-min-length), then --out (last: a failed run leaves it as it
    was); the characters stripped (all, and of templates) and what the writer adapted."""
    out, save_reference = outputs
    if save_reference is not None:
        with disk_errors(f"cannot save the reference {save_reference}", out):
            finder.save(save_reference)
    stripped = by_templates = 0
    strip_out, strip_min_length = strip
    if strip_out is not None:
        with disk_errors(f"cannot write {strip_out}", out):
            stripped, by_templates = write_stripped(
                strip_out, read, paths, got.spans, strip_min_length, got.cut
            )
    notes: list[str] = []  # what the writer adapted
    with disk_errors(f"cannot write {out}", out):
        write_found(out, got.found, notes, template=finder.templates == "keep")
    return stripped, by_templates, notes


def _notes(read: _Read, notes: list[str], *stats: ReadStats) -> None:
    """After the summary, as dedup's: the rows skipped (inputs, then reference files), the
    id and timestamp notes, and what the writer adapted (``notes``)."""
    for st in stats:
        for error in st.errors:
            click.echo(f"skipped: {error}", err=True)
        if st.skipped > len(st.errors):
            click.echo(f"skipped: {st.skipped - len(st.errors):,} more rows", err=True)
    ids = "a passage's id or source_id"
    for note in read_notes(stats[0], read.id_field, read.epoch_unit, ids) + notes:
        click.echo(note, err=True)


def _check_strip(strip_out: str | None, out: str, inputs: tuple[str, ...], engine: str) -> None:
    """Usage errors of ``--strip`` (before any work)."""
    if strip_out is None:
        return
    if engine == "spark":
        raise usage_error("--strip works with --engine local; drop --engine spark")
    if strip_out == out:
        raise usage_error("--strip and --out name the same file; give the cleaned texts their own")
    output_path_or_usage_error(strip_out, inputs, "--strip")


def _summary(n_docs: int, ref: str, with_copies: int, pairs: int, share: float, s: float) -> None:
    click.echo(
        f"overlap: {n_docs:,} documents{ref}: {with_copies:,} with copied passages, "
        f"{pairs:,} passage pairs, {share:.1%} of the text copied, {s:.2f}s",
        err=True,
    )


def _strip_summary(stripped: int, by_templates: int, kept: bool, strip_out: str) -> None:
    """The characters --strip removed, of them templates; ``kept``: templates were set aside
    and left in (the default), so the line names the flag that cuts them too."""
    more = "; those set aside kept, --strip-templates cuts them" if kept else ""
    click.echo(
        f"strip: {stripped:,} characters removed ({by_templates:,} of them templates{more}), "
        f"texts written to {strip_out}",
        err=True,
    )


def _templates_note(count: int, examples: list[tuple[Any, str]]) -> None:
    """The passages set aside as templates, with a few of them (one line each)."""
    if not count:
        return
    click.echo(
        f"overlap: {count:,} passage pairs set aside as templates of the collection "
        "(--templates keep reports them), e.g.:",
        err=True,
    )
    for p, text in examples[:3]:
        short = " ".join(text.split())
        short = short if len(short) <= 70 else short[:67] + "..."
        click.echo(f"  {p.id} <- {p.source_id}: {short!r}", err=True)


def _sources_note(cut: int, most: int) -> None:
    """The sources ``--sources all`` left out (a passage held by more earlier documents than
    ``--max-sources``)."""
    if cut:
        click.echo(
            f"overlap: {cut:,} sources left out of passages held by more than {most} earlier "
            "documents (the earliest and the closest kept; --max-sources raises the bound)",
            err=True,
        )


def _budget_note(count: int, ids: list[Any], per_gram: int) -> None:
    """The texts over their seed budget, looked up without their grams that find more than
    ``per_gram`` postings (``--budget trim``), with the first few ids."""
    if count:
        named = ", ".join(repr(i) for i in ids[:3]) + (", ..." if count > 3 else "")
        click.echo(
            f"overlap: {count:,} texts over their seed budget compared without their grams "
            f"that find more than {per_gram} postings (e.g. {named}; --max-seeds-per-gram "
            "raises the bound, --budget refuse stops instead)",
            err=True,
        )


def _on_spark(
    params: dict[str, Any],
    files: tuple[str, ...],
    reference: tuple[tuple[str, ...], str | None],
    out: str,
    read: _Read,
    spark_options: tuple[str | None, tuple[str, ...]],
) -> None:
    """``--engine spark``: the same passages, found by :mod:`neardup.spark.overlap`
    (``reference``: ``--against`` and ``--save-reference``)."""
    against, save_reference = reference
    if save_reference is not None or any(_saved(p) for p in against):
        raise usage_error(
            "saved references (--save-reference, --against DIR) are for --engine local; "
            "give --engine spark the reference files"
        )
    refs = check_inputs(against, read.fmt) if against else ()
    read.against = against
    start = time.perf_counter()
    master, conf = spark_options[0], parse_spark_conf(spark_options[1])
    try:
        finder = OverlapFinder(**params)
        from neardup.spark import require_pyspark

        require_pyspark()
    except (ValueError, ImportError) as exc:
        raise usage_error(str(exc)) from None
    if "-" in files + refs:
        raise usage_error("--engine spark reads files, not stdin (-); use --engine local")
    refuse_urls((*files, *refs, out))
    from neardup.spark.overlap import find_overlaps
    from neardup.spark.reader import Fields
    from neardup.spark.session import spark_session

    fields = Fields(read.text_field, read.id_field, read.time_field, read.epoch_unit, read.roots,
                    utf8_ids=read.utf8_ids)  # fmt: skip
    if master is None and not os.environ.get("NEARDUP_SPARK_SUBMITTED"):
        master = "local[*]"
    spark = spark_session(master, app_name="neardup-overlap", conf=conf)
    try:
        result = find_overlaps(spark, finder, files, fmt=read.fmt, fields=fields,
                               on_error=read.on_error, against=refs,
                               against_roots=read.against,
                               columns=partition_names(files, read.roots))  # fmt: skip
    except InputError as exc:
        raise EngineDataError(str(exc)) from None
    except SeedBudgetError as exc:  # the local engine's line, word for word
        raise DataError(f"{exc} (--max-seeds-per-gram N)") from None
    if result.stats.documents == 0 and result.stats.skipped:
        raise nothing_read_error(result.stats)
    notes: list[str] = []
    with disk_errors(f"cannot write {out}", out):
        write_rows(out, result.rows, notes)
    share = result.copied / result.chars if result.chars else 0.0
    secs = time.perf_counter() - start
    ref = f" against {result.references:,} reference documents" if refs else ""
    _summary(result.documents, ref, result.with_copies, len(result.rows), share, secs)
    _templates_note(result.templates, list(result.template_examples))
    _sources_note(result.sources_cut, finder.max_sources)
    _budget_note(result.over_budget, list(result.over_budget_ids), finder.max_seeds_per_gram)
    _notes(read, notes, result.stats)


def _run(
    finder: OverlapFinder,
    docs: Iterator[Document] | list[Document],
    keep: bool,
    read: _Read,
    spans: Spans | None = None,
    templates: Spans | None = None,
) -> tuple[int, DocumentPassages, int, float]:
    """Documents read, every document's passages with its partition columns (the document
    added to ``finder`` when ``keep``), documents with a passage, share of the characters
    inside one; ``spans`` gets the copy-side spans of each such document (for ``--strip``),
    ``templates`` (when given) those of its templates apart, set aside or flagged."""
    found: DocumentPassages = []
    n = chars = copied = 0
    read_ahead: deque[Document] = deque()  # the documents whose passages are still to come
    aside = finder.record_template_spans() if templates is not None else None

    def items() -> Iterator[tuple[str, Any]]:
        for doc in docs:
            read_ahead.append(doc)
            yield doc.text, doc.id

    for got in finder.stream(items(), add=keep):
        doc = read_ahead.popleft()
        n += 1
        chars += len(doc.text)
        copies, cut = split_templates(got, None if aside is None else aside.popleft())
        if cut and templates is not None:
            templates[doc.position] = cut
        if got:
            merged = merged_spans(p.span for p in got)
            copied += sum(b - a for a, b in merged)
            found.append((got, read.parts.get(doc.position, {})))
            if spans is not None:
                spans[doc.position] = merged_spans(copies)
    return n, found, len(found), copied / chars if chars else 0.0
