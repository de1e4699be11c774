"""``neardup idf fit``: fit an IDF table on a corpus for TF-IDF weighting."""

from __future__ import annotations

from itertools import chain

import click

from neardup.cli._common import (
    DataError,
    build_fingerprinter,
    check_inputs,
    config_option,
    input_options,
    out_option,
)
from neardup.io import InputError, ReadStats, iter_documents, iter_records

EXAMPLES = """
\b
Examples:
  neardup idf fit corpus.jsonl.gz --out idf.tsv --min-df 2
  neardup dedup docs.jsonl --idf idf.tsv --out marked.jsonl
"""


@click.group("idf", epilog=EXAMPLES)
def idf_group() -> None:
    """IDF tables for TF-IDF weighted fingerprints."""


@idf_group.command("fit", epilog=EXAMPLES)
@input_options()
@out_option("Where to write the table (text, atomic).")
@click.option(
    "--min-df",
    type=click.IntRange(1),
    default=1,
    help="Drop features in fewer documents than this.",
)
@config_option("Fingerprinter config whose analyzer defines the features.")
def fit_command(
    inputs: tuple[str, ...],
    out: str,
    fmt: str | None,
    text_field: str,
    min_df: int,
    config_path: str | None,
    on_error: str,
) -> None:
    """Count document frequencies of features over INPUT and write an IDF table."""
    files = check_inputs(inputs, fmt)  # a URL pattern's matches, a folder's parts
    fp = build_fingerprinter(config_path)
    stats = ReadStats()
    rows = chain.from_iterable(iter_records(p, fmt) for p in files)
    texts = (
        d.text
        for d in iter_documents(
            rows,
            text_field=text_field,
            on_error=on_error,  # type: ignore[arg-type]
            stats=stats,
        )
    )
    try:
        table = fp.fit_idf(texts, min_df=min_df)
    except InputError as exc:
        raise DataError(str(exc)) from None
    except ValueError as exc:
        raise DataError(f"cannot fit: {exc}") from None
    table.save(out)
    click.echo(
        f"IDF table: {len(table):,} features from {stats.documents:,} documents "
        f"(skipped {stats.skipped:,}) -> {out}",
        err=True,
    )
