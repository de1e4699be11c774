"""``neardup fingerprint``: add a fingerprint column (hex) and the config id to each record."""

from __future__ import annotations

from itertools import chain, islice

import click
import numpy as np

from neardup.cli._common import (
    DataError,
    build_fingerprinter,
    check_inputs,
    fingerprinter_options,
    input_options,
    nothing_read_error,
    out_option,
    output_path_or_usage_error,
    progress,
)
from neardup.io import (
    InputError,
    ReadStats,
    iter_document_records,
    iter_records,
    open_writer,
)

EXAMPLES = """
\b
Examples:
  neardup fingerprint docs.jsonl --out fps.jsonl
  neardup fingerprint docs.parquet --out fps.parquet --bits 128 --idf idf.tsv
  cat docs.jsonl | neardup fingerprint - --out - | head

\b
Exit codes: 0 done; 1 bad data (file and row named; with --on-error skip, a run where every
row fails is still 1); 2 usage error; 130/143 interrupted. On a non-zero exit --out is left as
it was.
"""


def hex_fingerprints(fps: np.ndarray) -> list[str]:
    """Zero-padded hex strings: 16 digits per 64-bit word (``(n,)`` or ``(n, 2)`` hi/lo).

    >>> hex_fingerprints(np.array([255, 2**64 - 1], dtype=np.uint64))
    ['00000000000000ff', 'ffffffffffffffff']
    """
    words = fps.reshape(len(fps), -1)
    return ["".join(f"{int(w):016x}" for w in row) for row in words]


@click.command("fingerprint", epilog=EXAMPLES)
@input_options()
@out_option()
@click.option("--field", "column", default="fingerprint", help="Name of the added column.")
@click.option(
    "--bits", type=click.Choice(["64", "128"]), default=None, help="Fingerprint width (default 64)."
)
@fingerprinter_options
def fingerprint_command(
    inputs: tuple[str, ...],
    out: str,
    fmt: str | None,
    text_field: str,
    column: str,
    bits: str | None,
    on_error: str,
    config_path: str | None,
    idf_path: str | None,
) -> None:
    """Add a SimHash fingerprint (hex string; null for texts without features) and
    ``config_id`` to every record. Reads stdin when INPUT is -."""
    files = check_inputs(inputs, fmt)
    output_path_or_usage_error(out, inputs + files)
    fp = build_fingerprinter(config_path, idf_path, None if bits is None else int(bits))
    config_id = fp.config_id
    stats = ReadStats()
    rows = chain.from_iterable(iter_records(p, fmt) for p in files)
    docs = iter_document_records(
        rows,
        text_field=text_field,
        on_error=on_error,  # type: ignore[arg-type]
        stats=stats,
    )
    try:
        with open_writer(out) as writer, progress("fingerprinting") as advance:
            while chunk := list(islice(docs, 8192)):
                fps, empty = fp.fingerprint_many([d.text for d, _ in chunk], return_mask=True)
                hexes = hex_fingerprints(fps)
                for (_, rec), h, e in zip(chunk, hexes, empty.tolist(), strict=True):
                    writer.write({**rec, column: None if e else h, "config_id": config_id})
                advance(len(chunk))
            if stats.documents == 0 and stats.skipped:
                raise nothing_read_error(stats)  # inside the writer: the old --out stays
    except InputError as exc:
        raise DataError(str(exc)) from None
    click.echo(
        f"fingerprinted {stats.documents:,} documents (skipped {stats.skipped:,}); "
        f"config {config_id}",
        err=True,
    )
