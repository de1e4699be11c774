"""``neardup index build|add|query|info``: a persistent index directory.

Layout of ``DIR``: ``index/`` (the :class:`HammingIndex`), ``ids.jsonl`` (the external id of
each internal position, one JSON value per line), ``fingerprinter.json`` (the config every
query must use), ``idf.tsv`` (when TF-IDF weighting is used) and ``meta.json``. Every change
writes a new directory next to ``DIR`` and swaps it in, so a failed run leaves ``DIR`` intact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from itertools import chain, islice
from pathlib import Path
from typing import Any

import click
import numpy as np

from neardup.cli._common import (
    DataError,
    build_fingerprinter,
    check_inputs,
    config_option,
    fingerprinter_options,
    input_options,
    progress,
    usage_error,
)
from neardup.features.idf import IdfTable
from neardup.fingerprint import Fingerprinter
from neardup.index import HammingIndex, IndexFormatError
from neardup.index.storage import replace_directory
from neardup.io import InputError, ReadStats, iter_documents, iter_records

EXAMPLES = """
\b
Examples:
  neardup index build idx/ archive.jsonl.gz --k 3
  neardup index add idx/ today.jsonl
  neardup index query idx/ "text to look up" --k 4
  neardup index query idx/ --file queries.jsonl > matches.jsonl
  neardup index info idx/
"""


@click.group("index", epilog=EXAMPLES)
def index_group() -> None:
    """Build and query a persistent fingerprint index."""


def _load(
    directory: str, config_path: str | None = None
) -> tuple[HammingIndex, list[Any], Fingerprinter, dict[str, Any]]:
    if not os.path.isdir(directory):
        raise usage_error(
            f"index directory {directory!r} does not exist; create it with `neardup index build`"
        )
    try:
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        with open(os.path.join(directory, "fingerprinter.json"), encoding="utf-8") as f:
            config = json.load(f)
        idf_file = os.path.join(directory, "idf.tsv")
        idf = IdfTable.load(idf_file) if os.path.exists(idf_file) else None
        fp = Fingerprinter.from_config(config, idf=idf)
        index = HammingIndex.load(os.path.join(directory, "index"), mmap=True)
        with open(os.path.join(directory, "ids.jsonl"), encoding="utf-8") as f:
            ids = [json.loads(line) for line in f]
    except (OSError, ValueError, IndexFormatError) as exc:
        raise DataError(f"cannot open index {directory!r}: {exc}") from None
    if config_path is not None:
        given = build_fingerprinter(config_path, None)
        if given.config_id != fp.config_id:
            raise usage_error(
                f"index {directory!r} was built with fingerprinter config "
                f"{fp.config_id}, but --config gives {given.config_id}; queries "
                "must use the index's config (omit --config)"
            )
    return index, ids, fp, meta


def _holds_other_data(directory: str) -> bool:
    """A non-empty directory that is not an index of ours: --force must not delete it."""
    return (
        os.path.isdir(directory)
        and bool(os.listdir(directory))
        and not os.path.exists(os.path.join(directory, "meta.json"))
    )


def _save(directory: str, index: HammingIndex, ids: list[Any], fp: Fingerprinter) -> None:
    parent = os.path.dirname(os.path.abspath(directory))
    tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(directory)}.")
    try:
        index.save(os.path.join(tmp, "index"))
        with open(os.path.join(tmp, "ids.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(i, ensure_ascii=False) + "\n" for i in ids)
        with open(os.path.join(tmp, "fingerprinter.json"), "w", encoding="utf-8") as f:
            json.dump(fp.get_config(), f, indent=2, ensure_ascii=False)
        if fp.idf is not None:
            fp.idf.save(os.path.join(tmp, "idf.tsv"))
        meta = {
            "format": 1,
            "k": index.k,
            "documents": len(ids),
            "live": len(index),
            "config_id": fp.config_id,
        }
        with open(os.path.join(tmp, "meta.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
        replace_directory(Path(tmp), Path(directory), marker="meta.json")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _add_inputs(
    index: HammingIndex,
    ids: list[Any],
    fp: Fingerprinter,
    inputs: tuple[str, ...],
    fmt: str | None,
    text_field: str,
    id_field: str,
    on_error: str,
) -> ReadStats:
    stats = ReadStats()
    rows = chain.from_iterable(iter_records(p, fmt) for p in inputs)
    docs = iter_documents(
        rows,
        text_field=text_field,
        id_field=id_field,
        on_error=on_error,  # type: ignore[arg-type]
        stats=stats,
    )
    try:
        with progress("indexing") as advance:
            while chunk := list(islice(docs, 16384)):
                fps, empty = fp.fingerprint_many([d.text for d in chunk], return_mask=True)
                keep = np.flatnonzero(~empty)
                start = len(ids)
                ids.extend(chunk[i].id for i in keep.tolist())
                index.add(np.arange(start, len(ids), dtype=np.int64), fps[keep])
                advance(len(chunk))
    except InputError as exc:
        raise DataError(str(exc)) from None
    return stats


@index_group.command("build", epilog=EXAMPLES)
@click.argument("directory")
@input_options(id_field=True)
@click.option("--k", "k", type=click.IntRange(0, 64), default=3, show_default=True)
@click.option("--force", is_flag=True, help="Replace an existing index directory.")
@fingerprinter_options
def build_command(
    directory: str,
    inputs: tuple[str, ...],
    fmt: str | None,
    text_field: str,
    id_field: str,
    on_error: str,
    k: int,
    force: bool,
    config_path: str | None,
    idf_path: str | None,
) -> None:
    """Create index DIRECTORY from INPUT files (texts without features are not indexed)."""
    check_inputs(inputs, fmt)
    if os.path.exists(directory) and not force:
        raise usage_error(
            f"{directory!r} exists; pass --force to replace it or use `neardup index add`"
        )
    if _holds_other_data(directory):
        raise usage_error(
            f"{directory!r} is not a neardup index directory (no meta.json); "
            "not replacing it even with --force: choose another directory"
        )
    fp = build_fingerprinter(config_path, idf_path)
    index, ids = HammingIndex(k=k), list[Any]()
    stats = _add_inputs(index, ids, fp, inputs, fmt, text_field, id_field, on_error)
    _save(directory, index, ids, fp)
    click.echo(
        f"indexed {len(ids):,} of {stats.documents:,} documents (skipped "
        f"{stats.skipped:,}, no features {stats.documents - len(ids):,}) -> {directory}",
        err=True,
    )


@index_group.command("add", epilog=EXAMPLES)
@click.argument("directory")
@input_options(id_field=True)
@config_option("Only checked: must equal the index's config.")
def add_command(
    directory: str,
    inputs: tuple[str, ...],
    fmt: str | None,
    text_field: str,
    id_field: str,
    on_error: str,
    config_path: str | None,
) -> None:
    """Add INPUT documents to an existing index DIRECTORY (same fingerprinter config)."""
    check_inputs(inputs, fmt)
    index, ids, fp, _ = _load(directory, config_path)
    before = len(ids)
    stats = _add_inputs(index, ids, fp, inputs, fmt, text_field, id_field, on_error)
    _save(directory, index, ids, fp)
    click.echo(
        f"added {len(ids) - before:,} of {stats.documents:,} documents -> {directory} "
        f"({len(ids):,} in all)",
        err=True,
    )


@index_group.command("query", epilog=EXAMPLES)
@click.argument("directory")
@click.argument("texts", nargs=-1)
@click.option("--file", "query_file", help="Queries from a file (JSONL/CSV/Parquet/txt).")
@click.option("--text-field", default="text", show_default=True)
@click.option(
    "--k",
    "k",
    type=click.IntRange(0, 64),
    default=None,
    help="Search radius (default: the index's k).",
)
@config_option("Only checked: must equal the index's config.")
def query_command(
    directory: str,
    texts: tuple[str, ...],
    query_file: str | None,
    text_field: str,
    k: int | None,
    config_path: str | None,
) -> None:
    """Print one JSON line per match: {"query", "id", "distance"}, nearest first."""
    if not texts and query_file is None:
        raise usage_error("give query TEXTS or --file")
    index, ids, fp, _ = _load(directory, config_path)
    queries: list[tuple[Any, str]] = [(i, t) for i, t in enumerate(texts)]
    if query_file is not None:
        check_inputs((query_file,), None)
        try:
            queries += [
                (d.id, d.text)
                for d in iter_documents(iter_records(query_file), text_field=text_field)
            ]
        except InputError as exc:
            raise DataError(str(exc)) from None
    fps, empty = fp.fingerprint_many([t for _, t in queries], return_mask=True)
    matches = index.search(fps, k=k)
    for q, i, d in zip(
        matches.query.tolist(), matches.id.tolist(), matches.distance.tolist(), strict=True
    ):
        if not empty[q]:
            click.echo(
                json.dumps(
                    {"query": queries[q][0], "id": ids[i], "distance": d}, ensure_ascii=False
                )
            )
    if empty.any():
        click.echo(f"{int(empty.sum())} queries have no features and match nothing", err=True)


@index_group.command("info", epilog=EXAMPLES)
@click.argument("directory")
def info_command(directory: str) -> None:
    """Print the index's metadata, fingerprinter config and design as JSON."""
    index, _, fp, meta = _load(directory)
    info = {**meta, "fingerprinter": fp.get_config(), "index": index.describe()}
    click.echo(json.dumps(info, indent=2, ensure_ascii=False, default=str))
