"""``neardup dedup --engine spark``: the CLI's options and dispatch for the Spark engine.

Imported by :mod:`neardup.cli.dedup` without PySpark: the options are plain click options, and
PySpark is imported only when ``--engine spark`` runs (a missing extra is a usage error naming
it). This module never imports :mod:`neardup.cli` (no cycle): the dedup command hands its
parameters over as a :class:`SparkOptions`. On a cluster, ``spark-submit`` runs the same job
through ``neardup/cli/spark_submit.py`` (docs/SCALE.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from neardup import _fs
from neardup.errors import NeardupError
from neardup.io import ReadStats
from neardup.io.writers import needs_utf8

if TYPE_CHECKING:  # the dedup engine is imported by the dedup command only, not by overlap's
    from neardup.dedup import Deduplicator


class EngineDataError(click.ClickException, NeardupError):
    """Bad data in an input file (exit code 1), shown as one line like the local engine's
    :class:`~neardup.cli._common.DataError` (not imported: the Spark package never imports
    the CLI)."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        message = self.format_message().replace("\r", "\\r").replace("\n", "\\n")
        click.echo(f"neardup: error: {message}", err=True)


@dataclass(frozen=True)
class SparkOptions:
    """The ``neardup dedup`` parameters the Spark engine reads (explicit, no ``locals()``)."""

    fmt: str | None = None
    text_field: str = "text"
    id_field: str = "id"
    time_field: str | None = None
    epoch_unit: str = "auto"
    on_error: str = "fail"
    drop_duplicates: bool = False
    report_dir: str | None = None
    spark_master: str | None = None
    spark_conf: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()  # the inputs as given (folders: Hive partition columns)
    max_time: float | None = None  # --max-future as an epoch limit (the driver's clock)
    cluster_members: bool = False  # --clusters: collect the members of clusters with duplicates
    pairs: str | None = None  # --pairs: the verified pairs file (written by the driver)
    max_disorder: float | None = None  # --max-disorder in seconds (with a window)


def parse_spark_conf(items: tuple[str, ...]) -> dict[str, str]:
    """``("k=v", ...)`` -> ``{k: v}``; a malformed item is a usage error naming it.

    >>> parse_spark_conf(("spark.executor.memory=4g", "spark.a=b=c"))
    {'spark.executor.memory': '4g', 'spark.a': 'b=c'}
    """
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not key.startswith("spark."):
            raise click.UsageError(
                f"--spark-conf {item!r}: expected KEY=VALUE with a Spark key, "
                "e.g. --spark-conf spark.executor.memory=4g"
            )
        out[key.strip()] = value
    return out


def late_note(count: int) -> str:
    """The summary line about late documents (both engines print it)."""
    return (
        f"late documents: {count:,} (older than the newest timestamp before them minus --window: "
        "kept documents older than that had expired for them, as in a stream; input in time "
        "order has none)"
    )


def _nothing_read(stats: ReadStats) -> EngineDataError:
    return EngineDataError(stats.nothing_read())


def refuse_urls(paths: tuple[str, ...]) -> None:
    """A usage error for a URL (:mod:`neardup._fs`): the Spark engine reads and writes paths
    its driver and executors share, not fsspec URLs."""
    for path in paths:
        if _fs.is_remote(path):
            raise click.UsageError(
                f"--engine spark does not read or write URLs ({path!r}); use --engine local, "
                "or a path every Spark executor can read"
            )


def dedup_on_engine(
    engine: str, dd: Deduplicator, inputs: tuple[str, ...], out: str, options: SparkOptions
) -> Any:
    """Run the dedup on ``engine`` when it is not the local one; returns its
    :class:`~neardup.spark.job.JobResult` (None: the local engine runs it)."""
    if engine == "local":
        return None
    if options.report_dir is not None:
        raise click.UsageError("--report is not available with --engine spark; drop one of them")
    refuse_urls((*inputs, out))
    conf = parse_spark_conf(options.spark_conf)
    try:
        from neardup.spark import require_pyspark

        require_pyspark()
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None
    from neardup.io import InputError
    from neardup.spark.job import run_job
    from neardup.spark.reader import Fields
    from neardup.spark.session import spark_session

    o = options
    fields = Fields(o.text_field, o.id_field, o.time_field, o.epoch_unit, o.roots, o.max_time,
                    utf8_ids=needs_utf8(out))  # fmt: skip
    master = o.spark_master
    if master is None and not os.environ.get("NEARDUP_SPARK_SUBMITTED"):
        master = "local[*]"  # under spark-submit (cli/spark_submit.py) the submitted one
    spark = spark_session(master, conf=conf)
    try:
        result = run_job(
            spark,
            dd,
            inputs,
            out,
            fmt=o.fmt,
            fields=fields,
            on_error=o.on_error,
            drop_duplicates=o.drop_duplicates,
            members=o.cluster_members,
            pairs_out=o.pairs,
            max_disorder=o.max_disorder,
        )
    except InputError as exc:
        raise EngineDataError(str(exc)) from None
    if result.stats.documents == 0 and result.stats.skipped:
        raise _nothing_read(result.stats)
    _summary(result, o.max_disorder)
    return result


def _summary(result: Any, max_disorder: float | None) -> None:
    c, s, info = result.counts, result.stats, result.info
    lines = [
        f"documents: {s.documents:,}  unique: {c['unique']:,}  duplicates: {c['duplicate']:,}  "
        f"exact duplicates: {c['exact_duplicate']:,}  empty: {c['empty']:,}  "
        f"skipped: {s.skipped:,}",
        f"spark: {result.seconds:.2f} s, "
        + (
            "prepared on executors, decided on the driver (small job)"
            if info.get("path") == "driver"
            else f"{info.get('accepted_pairs', 0):,} accepted pairs, "
            f"{info.get('cc_rounds', 0)} connected-component rounds"
        )
        + f", {info.get('shuffle_partitions', '?')} shuffle partitions",
    ]
    lines += [f"skipped: {e}" for e in s.errors[:5]]
    if info.get("late_documents"):
        lines.append(late_note(int(info["late_documents"])))
    if "pairs_note" in info:
        lines.append(info["pairs_note"])
    if (late := info.get("out_of_order", {})).get("count") and max_disorder is not None:
        from neardup.dedup.disorder import disorder_note  # not at import: see TYPE_CHECKING

        lines.append(disorder_note(late["count"], max_disorder, late["examples"]))
    click.echo("\n".join(lines), err=True)
