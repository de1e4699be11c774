"""``neardup dedup --engine spark``: the CLI's options and dispatch for the Spark engine.

Imported by :mod:`neardup.cli.dedup` without PySpark: the options are plain click options, and
PySpark is imported only when ``--engine spark`` runs (a missing extra is a usage error naming
it). On a cluster, ``spark-submit`` runs the same job through ``python -m neardup.spark``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from neardup.dedup import Deduplicator

ENGINES = ("local", "spark")
F = TypeVar("F", bound=Callable[..., Any])


def engine_options(f: F) -> F:
    """``--engine`` and ``--spark-master`` (click decorator)."""
    f = click.option(
        "--spark-master",
        default=None,
        help="Spark master for --engine spark (default local[*]; under spark-submit the "
        "submitted master).",
    )(f)
    f = click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default="local",
        show_default=True,
        help="local: this process; spark: Apache Spark (needs neardup[spark] and Java 17), "
        "same decisions.",
    )(f)
    return f


def dedup_on_engine(
    engine: str,
    dd: Deduplicator,
    inputs: tuple[str, ...],
    out: str,
    options: dict[str, Any],
) -> bool:
    """Run the dedup on ``engine`` when it is not the local one; returns whether it ran.

    ``options``: the dedup command's parameters (fmt, text_field, id_field, time_field,
    epoch_unit, on_error, drop_duplicates, report_dir, spark_master).
    """
    if engine == "local":
        return False
    from neardup.cli._common import DataError, nothing_read_error, usage_error

    if options.get("report_dir") is not None:
        raise usage_error("--report is not available with --engine spark; drop one of them")
    try:
        from neardup.spark import require_pyspark

        require_pyspark()
    except ImportError as exc:
        raise usage_error(str(exc)) from None
    from neardup.io import InputError
    from neardup.spark.job import run_job
    from neardup.spark.reader import Fields
    from neardup.spark.session import spark_session

    fields = Fields(
        options["text_field"], options["id_field"], options["time_field"], options["epoch_unit"]
    )
    master = options.get("spark_master")
    if master is None and not os.environ.get("NEARDUP_SPARK_SUBMITTED"):
        master = "local[*]"  # under spark-submit (python -m neardup.spark) the submitted one
    spark = spark_session(master)
    try:
        result = run_job(
            spark,
            dd,
            inputs,
            out,
            fmt=options.get("fmt"),
            fields=fields,
            on_error=options["on_error"],
            drop_duplicates=options["drop_duplicates"],
        )
    except InputError as exc:
        raise DataError(str(exc)) from None
    if result.stats.documents == 0 and result.stats.skipped:
        raise nothing_read_error(result.stats)
    c, s = result.counts, result.stats
    lines = [
        f"documents: {s.documents:,}  unique: {c['unique']:,}  duplicates: {c['duplicate']:,}  "
        f"exact duplicates: {c['exact_duplicate']:,}  empty: {c['empty']:,}  "
        f"skipped: {s.skipped:,}",
        f"spark: {result.seconds:.2f} s, {result.info.get('accepted_pairs', 0):,} accepted "
        f"pairs, {result.info.get('cc_rounds', 0)} connected-component rounds",
    ]
    lines += [f"skipped: {e}" for e in s.errors[:5]]
    click.echo("\n".join(lines), err=True)
    return True
