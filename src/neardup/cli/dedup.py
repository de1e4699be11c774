"""``neardup dedup``: mark (or drop) near-duplicates in files, one output record per input."""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

import click

from neardup.cli._common import (
    DataError,
    ReadOptions,
    build_fingerprinter,
    check_inputs,
    check_jobs,
    disk_errors,
    document_records,
    engine_options,
    fingerprinter_options,
    materialized_stdin,
    nothing_read_error,
    output_path_or_usage_error,
    progress,
    read_notes,
    read_options,
    usage_error,
)
from neardup.cli._decision import Decision, build_deduplicator, decision_options
from neardup.cli._dedup_feed import DocumentRecords, feed_ahead
from neardup.cli._dedup_write import (
    OUR_FIELDS,
    LineSpool,
    Plan,
    can_write_fast,
    write_fast,
    write_generic,
)
from neardup.cli._outputs import (
    ExtraOutputs,
    print_summary,
    record_of,
    summary_record,
    written_line,
)
from neardup.cli._pairs import write_pairs
from neardup.cli._state import RunState, dedup_state
from neardup.cli.report import check_report_extra
from neardup.dedup import Decisions, Deduplicator
from neardup.dedup.decisions import concat_decisions
from neardup.dedup.disorder import (
    DEFAULT_MAX_DISORDER,
    DisorderBuffer,
    disorder_note,
    in_input_order,
)
from neardup.io import (
    Document,
    InputError,
    ReadStats,
    Record,
    parse_window,
)
from neardup.io.partitions import PartOrder, root_of
from neardup.io.readers import Row, iter_part_records
from neardup.io.writers import RecordWriter, needs_utf8
from neardup.spark.cli import SparkOptions, dedup_on_engine, late_note

EXAMPLES = """
\b
Examples:
  neardup dedup examples/sample_news.jsonl --out - --time-field date --window 7d
  neardup dedup docs.jsonl.gz --out kept.parquet --drop-duplicates --report report/
  cat docs.jsonl | neardup dedup - --out - --k 4 > marked.jsonl
  neardup dedup corpus_dir/ --out marked.jsonl     # a folder of .txt files, id = path
  neardup dedup spark_out/ --out marked.parquet     # a folder of parts (part-*.parquet)

\b
Exit codes: 0 done; 1 bad data (the message names file and row; --on-error skip skips such
rows, but a run where every row fails is still 1) or an output that cannot be written (a full
disk: the message names it); 2 usage error (bad option, missing input, --out equal to an
input); 130/143 interrupted (Ctrl-C / SIGTERM). On a non-zero exit --out is left as it was.
"""


# bytes of input lines kept from pass 1 for the writer when the whole input fits (see
# _spool_budget), else it reads the input again: ~5 % of a run (gunzip and scan again) against
# the input's size in RSS (Reuters' 37 MB of lines were a third of its peak)
SPOOL_BUDGET = 32 << 20
# documents per decide step: the transient per chunk (records, texts, packed bytes, 64-bit
# sketches) was most of the peak RSS at 16,384 (199 MiB on Reuters, 96 at 2,048); CPU time is
# the same from 1,024 up, and at >= 1,024 the sketch still runs beside the fingerprints. Two
# chunks are in flight (one read while the other is prepared): 1,024 keeps the transient of
# one 2,048 chunk (mixed 25 MB: 120 MiB at 1,024 against 133 at 2,048, same wall time)
CHUNK_SIZE = 1024


@dataclass
class _Run:
    """Everything one invocation needs across its passes."""

    inputs: tuple[str, ...]
    fmt: str | None
    text_field: str
    id_field: str
    time_field: str | None
    on_error: str
    epoch_unit: str = "s"
    utf8_ids: bool = False  # --out is CSV or Parquet: ids with lone surrogates are bad rows
    stats: ReadStats = field(default_factory=lambda: ReadStats(track_ids=True))
    notes: list[str] = field(default_factory=list)
    spool: LineSpool | None = None  # pass 1's raw lines for the fast writer
    roots: tuple[str, ...] = ()  # the inputs as given: folders whose parts these are
    max_time: float | None = None  # --max-future: later timestamps are bad rows
    order: PartOrder = field(default_factory=PartOrder)  # are the parts in time order?
    buffer: DisorderBuffer[tuple[Document, Record]] | None = None  # --max-disorder
    fed: array[int] = field(default_factory=lambda: array("q"))  # input positions, as decided
    _spooled: bool = False

    def documents(self, stats: ReadStats | None = None) -> Iterator[tuple[Document, Record]]:
        keep = None if self._spooled or self.spool is None else self.spool.keep  # pass 1 only
        first_pass = not self._spooled
        self._spooled = True
        rows = chain.from_iterable(
            iter_part_records(p, root_of(p, self.roots), self.fmt, keep) for p in self.inputs
        )
        if first_pass and self.time_field is not None:
            return self._timed(rows)
        return self._read(rows, stats)

    def _timed(self, rows: Iterator[Row]) -> Iterator[tuple[Document, Record]]:
        """Pass 1 with a time field: note which part each document's timestamp comes from
        (documents are made from rows one by one, so the part of the row last read is its)."""
        order = self.order

        def parts() -> Iterator[Row]:
            for where, rec in rows:
                order.at(where.rsplit(":", 1)[0])
                yield where, rec

        for doc, rec in self._read(parts(), None):
            order.see(doc.timestamp)
            yield doc, rec

    def _read(
        self, rows: Iterator[Row], stats: ReadStats | None
    ) -> Iterator[tuple[Document, Record]]:
        return document_records(self, rows, self.stats if stats is None else stats, self.max_time)


@click.command("dedup", epilog=EXAMPLES)
@read_options(
    "Timestamp field: ISO 8601 (2026-11-02, 2026-11-02T09:30:00Z), compact dates "
    "(20261102, 20261102093000), 2026/11/02, 26-FEB-1987 15:01:01, or an epoch number (see "
    "--epoch-unit); naive times are UTC. Non-finite values, invalid dates and years outside "
    "1..9999 are bad rows (--on-error)."
)
@click.option("--window", default=None, help="Only documents this close in time match: 7d, 12h.")
@click.option(
    "--max-disorder",
    default=f"{DEFAULT_MAX_DISORDER / 3600:g}h",
    show_default=True,
    help="With --window: rows up to this far behind a newer row are decided in time order "
    "(held in a buffer of that much time); later ones are decided on arrival and named in the "
    "summary. 0: decide in input order.",
)
@click.option(
    "--max-future",
    default="1d",
    help="With --window: timestamps later than this machine's clock plus this are bad rows "
    "(one typo'd year would move the window for every later document); none: no limit.",
)
@decision_options
@click.option(
    "--keep",
    type=click.Choice(["first", "longest", "newest"]),
    default="first",
    help="Which document of a group is kept.",
)
@click.option("--drop-duplicates", is_flag=True, help="Write only kept documents.")
@click.option(
    "--report",
    "report_dir",
    default=None,
    callback=check_report_extra,
    help="Write report.md + PNG plots here (needs neardup[report]).",
)
@click.option(
    "--summary", "summary_path", default=None, help="Also write the summary as JSON here."
)
@click.option(
    "--clusters",
    "clusters_path",
    default=None,
    help="Write one row per cluster with duplicates (cluster_id, size, kept_id, members) here: "
    ".jsonl, .csv or .parquet.",
)
@click.option(
    "--jobs",
    "-j",
    type=int,
    default=1,
    callback=check_jobs,
    help="Fingerprinting worker processes (-1: all cores).",
)
@click.option(
    "--pairs",
    "pairs_path",
    default=None,
    help="Also write every verified candidate pair (id_a, id_b, similarity, distance), whoever "
    "was kept, here: .jsonl, .csv or .parquet (not with --window or --state).",
)
@click.option("--chunk-size", default=CHUNK_SIZE, hidden=True, type=click.IntRange(1))
@click.option(
    "--state",
    "state_dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Dedup state directory: decide against every document of earlier runs with the same "
    "state (created on the first run, updated atomically; runs on one state are serialised).",
)
@fingerprinter_options
@engine_options
def dedup_command(
    reading: ReadOptions,
    window: str | None,
    max_disorder: str,
    max_future: str,
    decision: Decision,
    keep: str,
    drop_duplicates: bool,
    report_dir: str | None,
    summary_path: str | None,
    clusters_path: str | None,
    pairs_path: str | None,
    jobs: int,
    chunk_size: int,
    config_path: str | None,
    idf_path: str | None,
    state_dir: str | None,
    engine: str,
    spark_master: str | None,
    spark_conf: tuple[str, ...],
) -> None:
    """Find near-duplicate documents and write every record with its decision.

    Adds cluster_id, duplicate_of (id of the kept document), distance (Hamming), similarity
    (the estimated Jaccard that decided) and threshold (the one that applied: 0.8 for texts
    under 50 characters; all null when kept) and status (unique, duplicate, exact_duplicate,
    empty). A summary goes to stderr.
    INPUT is a file, a folder of parts or of .txt files, or - (stdin).
    """
    inputs, out = reading.inputs, reading.out
    files = check_inputs(inputs, reading.fmt)
    extra = _checked_outputs(inputs + files, out, summary_path, clusters_path, report_dir)
    seconds, max_time = _check_options(
        window, max_future, reading.time_field, keep, state_dir, engine
    )
    _check_pairs(pairs_path, window, state_dir, inputs + files, out)
    disorder = _disorder_buffer(max_disorder, seconds, keep)
    fp = build_fingerprinter(config_path, idf_path)
    dd = build_deduplicator(fp, decision, keep=keep, window=seconds, n_jobs=jobs)
    start = time.perf_counter()
    with materialized_stdin(files) as paths, dedup_state(state_dir, dd) as state:
        run = _Run(paths, reading.fmt, reading.text_field, reading.id_field, reading.time_field,
                   reading.on_error, reading.epoch_unit, utf8_ids=needs_utf8(out), roots=inputs,
                   max_time=max_time, buffer=disorder)  # fmt: skip
        opts = _spark_options(run, drop_duplicates, report_dir, (spark_master, spark_conf),
                              clusters_path is not None, pairs_path)  # fmt: skip
        if (result := dedup_on_engine(engine, dd, paths, out, opts)) is not None:
            _write_engine_outputs(result, extra, out, opts.max_disorder)
            return
        decided = _run_local(run, dd, state, out, extra, chunk_size, drop_duplicates)
        record = _write_local_outputs(run, dd, decided, extra, out, pairs_path, start)
    print_summary(record)
    if record["notes"]:
        click.echo("\n".join(record["notes"]), err=True)


def _spark_options(
    run: _Run,
    drop_duplicates: bool,
    report_dir: str | None,
    spark: tuple[str | None, tuple[str, ...]],
    cluster_members: bool,
    pairs_path: str | None,
) -> SparkOptions:
    """What ``--engine spark`` reads of this run: ``run``'s read options and the outputs
    (``spark``: ``--spark-master`` and ``--spark-conf``)."""
    buffer = run.buffer
    return SparkOptions(run.fmt, run.text_field, run.id_field, run.time_field, run.epoch_unit,
                        run.on_error, drop_duplicates, report_dir, *spark, roots=run.roots,
                        max_time=run.max_time, cluster_members=cluster_members,
                        pairs=pairs_path,
                        max_disorder=None if buffer is None else buffer.max_disorder)  # fmt: skip


def _write_local_outputs(
    run: _Run,
    dd: Deduplicator,
    decided: tuple[Decisions, Plan, RecordWriter],
    extra: ExtraOutputs,
    out: str,
    pairs_path: str | None,
    start: float,
) -> dict[str, Any]:
    """The summary record of a local run (``decided``: its decisions, the writer's plan and
    the ``--out`` written aside) after writing ``--pairs`` and the extra outputs
    (``--summary``, ``--clusters``, ``--report``), then ``--out``: it replaces the previous
    one last, so any output failing leaves it as it was."""
    decisions, plan, written = decided
    seconds_taken = time.perf_counter() - start
    record = summary_record(run.stats, decisions, seconds_taken)
    record["notes"] = read_notes(run.stats, run.id_field, run.epoch_unit) + run.notes
    try:
        if pairs_path is not None:
            docs = (doc for doc, _ in run.documents(ReadStats()))
            with disk_errors(f"cannot write --pairs {pairs_path}", out):
                record["notes"].append(write_pairs(pairs_path, dd, docs))
        record["outputs"] = extra.written(out)
        # before the state commits: an output that cannot be written leaves the state as it was
        report = (plan.examples, run.stats, seconds_taken, dd.state.decide_config)
        extra.write(record, decisions, plan.ids, report, left=(out,))
        with disk_errors(f"cannot write {out}", out):
            written.commit()
    finally:
        written.abort()  # (nothing left to drop once committed)
    return record


def _checked_outputs(
    inputs: tuple[str, ...], out: str, summary: str | None, clusters: str | None, report: str | None
) -> ExtraOutputs:
    """Usage errors of the output locations (before any work): ``--out`` and the extras."""
    output_path_or_usage_error(out, inputs)
    extra = ExtraOutputs(summary, clusters, report)
    extra.check(inputs)
    return extra


def _write_engine_outputs(
    result: Any, extra: ExtraOutputs, out: str, max_disorder: float | None
) -> None:
    """``--summary`` and ``--clusters`` of a Spark run (it printed its summary), and where
    the outputs went."""
    record = record_of(result.stats, result.counts, result.clusters, result.seconds)
    late = int(result.info.get("late_documents", 0))
    record["notes"] = [late_note(late)] if late else []
    if (behind := result.info.get("out_of_order", {})).get("count") and max_disorder is not None:
        record["notes"].append(disorder_note(behind["count"], max_disorder, behind["examples"]))
    record["outputs"] = extra.written(out)
    extra.write_engine(record, result.members)
    click.echo(written_line(record["outputs"]), err=True)


def _run_local(
    run: _Run,
    dd: Deduplicator,
    state: RunState | None,
    out: str,
    extra: ExtraOutputs,
    chunk_size: int,
    drop_duplicates: bool,
) -> tuple[Decisions, Plan, RecordWriter]:
    """Decide ``run``'s documents on the local engine (with ``--state``: against the earlier
    runs, staging the new state version) and write ``out``, finished but not yet in place
    (the writer returned commits it); notes go to ``run.notes``."""
    fast = can_write_fast(run, out)
    run.spool = LineSpool(_spool_budget(run.inputs)) if fast else None
    try:
        dd = state.dd if state is not None else dd  # the same configuration (checked)
        decisions = _decide(run, dd, chunk_size, with_ids=state is not None)
        if state is not None:
            decisions = state.this_run(decisions)  # rows of this run, earlier ids known
            run.notes += state.notes(len(decisions))
        if run.buffer is not None:  # decided in time order: back to input order
            decisions = in_input_order(decisions, run.fed)
            run.notes += _disorder_note(run.buffer)
        if state is not None:
            state.stage(out)  # the state's files before the outputs (committed at the end)
        elif late := int(dd.describe()["late_documents"]):  # issue 22: both engines say so
            run.notes.append(late_note(late))
        in_order = run.buffer is not None and not run.buffer.late  # (the buffer sorted them)
        if (
            (dd.window is not None or state is not None)
            and not in_order
            and (note := run.order.note())
        ):
            run.notes.append(note)
        if run.stats.documents == 0 and run.stats.skipped:
            raise nothing_read_error(run.stats)
        plan = Plan.of(decisions)
        extra.want_ids(plan.needed, decisions)
        if state is not None:
            plan.ids.update(state.earlier_ids)
        write = write_fast if fast else write_generic
        # kept documents may come after their duplicates in the input: collect ids first
        lookahead = dd.keep != "first" or run.buffer is not None
        with disk_errors(f"cannot write {out}", out):
            written = write(run, plan, out, drop_duplicates, lookahead)
    except InputError as exc:
        raise DataError(str(exc)) from None
    return decisions, plan, written


def _spool_budget(paths: tuple[str, ...]) -> int:
    """``SPOOL_BUDGET`` when the inputs fit in it (a gzip file by its trailer's size field),
    else 0: a spool dropped half way through the input would only add its size to the peak."""
    total = 0
    for path in paths:
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if f.read(2) == b"\x1f\x8b" and size >= 18:  # ISIZE: the last member's size
                    f.seek(-4, os.SEEK_END)
                    size = max(size, int.from_bytes(f.read(4), "little"))
        except OSError:
            return SPOOL_BUDGET  # (a reader error is reported by the reader)
        total += size
    return SPOOL_BUDGET if total <= SPOOL_BUDGET else 0


def _check_pairs(
    pairs: str | None,
    window: str | None,
    state_dir: str | None,
    inputs: tuple[str, ...],
    out: str,
) -> None:
    """Usage errors of ``--pairs`` (before any work)."""
    if pairs is None:
        return
    for flag, given in (("--window", window), ("--state", state_dir)):
        if given is not None:
            raise usage_error(
                f"--pairs lists the verified pairs of one whole input; drop {flag} or --pairs"
            )
    if pairs == "-" or pairs == out:
        raise usage_error("--pairs needs a file path of its own (stdout carries --out)")
    output_path_or_usage_error(pairs, inputs, "--pairs")


def _check_options(
    window: str | None,
    max_future: str,
    time_field: str | None,
    keep: str,
    state_dir: str | None,
    engine: str,
) -> tuple[float | None, float | None]:
    """Usage errors of option combinations; the window in seconds and the latest timestamp
    accepted (epoch seconds: only with a window, where one far-future date would matter)."""
    if window is not None and time_field is None:
        raise usage_error("--window needs --time-field")
    if keep == "newest" and time_field is None:
        raise usage_error("--keep newest needs --time-field")
    if state_dir is not None and keep != "first":
        raise usage_error(
            f"--keep {keep} cannot go on from a --state: a later {keep} document would change "
            "decisions already written; use --keep first with --state"
        )
    if engine == "spark" and state_dir is not None:
        raise usage_error("--state works with the local engine only; drop --engine spark")
    if window is None:
        return None, None
    try:
        seconds = parse_window(window)
        future = None if max_future.lower() == "none" else parse_window(max_future)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    return seconds, None if future is None else time.time() + future


def _disorder_buffer(
    value: str, window: float | None, keep: str
) -> DisorderBuffer[tuple[Document, Record]] | None:
    """The ``--max-disorder`` buffer (None without a window, or with keep other than first,
    where run() orders the whole input)."""
    try:  # 0: input order, the rows behind a newer one still counted and named
        seconds = 0.0 if value.strip() == "0" else parse_window(value)
    except ValueError as exc:
        raise usage_error(f"--max-disorder: {exc}") from None
    if window is None or keep != "first":
        return None
    return DisorderBuffer(seconds)


def _disorder_note(buffer: DisorderBuffer[tuple[Document, Record]]) -> list[str]:
    """The summary line naming the rows the buffer could not put in time order."""
    if not buffer.late:
        return []
    return [disorder_note(buffer.late, buffer.max_disorder, [d.id for d, _ in buffer.late_items])]


def _decide(run: _Run, dd: Deduplicator, chunk_size: int, with_ids: bool = False) -> Decisions:
    """Pass 1: fingerprint and decide, chunk by chunk (texts never all in memory)."""
    chunks = _chunks(run, chunk_size)
    with progress("fingerprinting") as advance:
        if dd.keep == "first" and dd.n_jobs == 1:
            return concat_decisions(feed_ahead(dd, chunks, with_ids, advance))
        parts = []
        for chunk, ts in chunks:
            texts = [d.text for d, _ in chunk]
            if dd.keep == "first":
                ids = [d.id for d, _ in chunk] if with_ids else None
                parts.append(dd.feed(texts, ts, ids=ids))
            else:
                dd.state.collect(dd.prepare(texts, ts))
            advance(len(chunk))
    return concat_decisions(parts) if dd.keep == "first" else dd.state.resolve()


def _chunks(run: _Run, chunk_size: int) -> Iterator[tuple[DocumentRecords, list[float] | None]]:
    """Pass 1's documents in chunks of ``chunk_size``, with their timestamps (None untimed);
    records holding a field of ours are noted for the generic writer as they are read."""
    docs = run.documents()
    timed = run.time_field is not None
    if run.buffer is not None:  # time order within --max-disorder (dedup/disorder.py)
        docs = run.buffer.reorder(docs, _time_of)
    spool = run.spool
    while chunk := list(islice(docs, chunk_size)):
        if spool is not None:
            spool.settle()
            spool.conflicts.update(d.position for d, rec in chunk if not OUR_FIELDS.isdisjoint(rec))
        if run.buffer is not None:
            run.fed.extend(d.position for d, _ in chunk)
        yield chunk, [d.timestamp for d, _ in chunk] if timed else None  # type: ignore[misc]


def _time_of(item: tuple[Document, Record]) -> float:
    return item[0].timestamp  # type: ignore[return-value]  # (set: a time field is given)
