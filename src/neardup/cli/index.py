"""``neardup index build|add|query|info``: a persistent index directory.

``DIR`` is a saved :class:`HammingIndex` (see :mod:`neardup.index.storage`): a versioned
directory whose manifest also holds the fingerprinter config (and its config id) every query
must use, the IDF table when TF-IDF weighting is used, and the external id of every indexed
document, all covered by checksums. Writers (``build``, ``add``) hold a lock on ``DIR``: a second
writer waits for the first (``--no-wait``: fails at once), so concurrent adds never lose a run,
and queries always read one consistent version. A failed or killed run leaves ``DIR`` as it was.

External ids are unique in an index: a document whose id is already indexed (or repeated in
the input) is an error naming the id (``--on-error skip`` skips and counts it instead), so
re-adding a file never doubles its matches. Records without an id field get their position in
the run's input as id (as in ``neardup dedup``).
"""

from __future__ import annotations

import json
import os
from itertools import chain, islice
from pathlib import Path
from typing import Any

import click
import numpy as np

from neardup import _fs
from neardup._atomic import DirectoryBusyError, atomic_directory, current_version
from neardup._persist import MANIFEST, JsonColumn
from neardup.cli._common import (
    DataError,
    build_fingerprinter,
    check_inputs,
    config_option,
    expand_patterns,
    fingerprinter_options,
    input_options,
    progress,
    usage_error,
)
from neardup.fingerprint import Fingerprinter
from neardup.index import HammingIndex, IndexFormatError
from neardup.index.storage import SavedIndex, open_index, read_index_files, write_index_files
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


def _with_inputs(func: Any) -> Any:
    """The shared input options plus ``--no-wait`` (writers only)."""
    func = click.option(
        "--no-wait", is_flag=True, help="Fail at once if another process is writing DIRECTORY."
    )(func)
    return input_options(id_field=True)(func)


@click.group("index", epilog=EXAMPLES)
def index_group() -> None:
    """Build and query a persistent fingerprint index."""


def _local_only(directory: str) -> None:
    """An index is memory-mapped and locked where it lies: a local folder, not a URL."""
    if _fs.is_remote(directory):
        raise usage_error(
            f"index directory {directory!r}: an index is a local folder (memory-mapped, with a "
            "writer lock), not a URL; build it locally and copy the folder"
        )


def _open(directory: str | Path, version: Path | None = None) -> SavedIndex[HammingIndex]:
    """The saved index of ``directory`` (its live version, or ``version``)."""
    _local_only(str(directory))
    if not os.path.isdir(directory):
        raise usage_error(
            f"index directory {str(directory)!r} does not exist; create it with "
            "`neardup index build`"
        )
    if os.path.exists(os.path.join(directory, "meta.json")):
        raise DataError(
            f"index {str(directory)!r} was written by an older neardup (meta.json + ids.jsonl); "
            "rebuild it with `neardup index build --force`"
        )
    try:
        if version is None:
            saved = open_index(HammingIndex, directory)
        else:
            saved = read_index_files(HammingIndex, version, mmap=True, verify=True)
    except (OSError, ValueError, IndexFormatError) as exc:
        raise DataError(f"cannot open index {str(directory)!r}: {exc}") from None
    if saved.fingerprinter is None or saved.external_ids is None:
        raise DataError(
            f"{str(directory)!r} is a library HammingIndex without fingerprinter config or "
            "external ids; build CLI indexes with `neardup index build`"
        )
    return saved


def _check_config(directory: str, fp: Fingerprinter, config_path: str | None) -> None:
    if config_path is not None:
        given = build_fingerprinter(config_path, None)
        if given.config_id != fp.config_id:
            raise usage_error(
                f"index {directory!r} was built with fingerprinter config "
                f"{fp.config_id}, but --config gives {given.config_id}; queries "
                "must use the index's config (omit --config)"
            )


def _holds_other_data(directory: str) -> bool:
    """A non-empty directory that is not an index of ours: --force must not delete it."""
    ours = ("CURRENT", "meta.json", MANIFEST)
    return (
        os.path.isdir(directory)
        and bool(os.listdir(directory))
        and not any(os.path.exists(os.path.join(directory, m)) for m in ours)
    )


def _existing_keys(ids: JsonColumn) -> set[bytes]:
    """The stored JSON bytes of every external id (equal values, equal bytes)."""
    data, off = ids.arrays()
    raw = bytes(data)
    bounds = off.tolist()
    return {raw[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)}


def _add_inputs(
    index: HammingIndex,
    ids: JsonColumn,
    fp: Fingerprinter,
    inputs: tuple[str, ...],
    options: dict[str, Any],
) -> ReadStats:
    stats = ReadStats()
    rows = chain.from_iterable(iter_records(p, options["fmt"]) for p in inputs)
    docs = iter_documents(
        rows,
        text_field=options["text_field"],
        id_field=options["id_field"],
        on_error=options["on_error"],
        stats=stats,
    )
    seen = _existing_keys(ids)
    try:
        with progress("indexing") as advance:
            while chunk := list(islice(docs, 16384)):
                chunk = [d for d in chunk if _new_id(d.id, seen, stats, options["on_error"])]
                fps, empty = fp.fingerprint_many([d.text for d in chunk], return_mask=True)
                keep = np.flatnonzero(~empty)
                start = len(ids)
                ids.extend(chunk[i].id for i in keep.tolist())
                index.add(np.arange(start, len(ids), dtype=np.int64), fps[keep])
                advance(len(chunk))
    except InputError as exc:
        raise DataError(str(exc)) from None
    return stats


def _new_id(value: Any, seen: set[bytes], stats: ReadStats, on_error: str) -> bool:
    try:
        key = json.dumps(value).encode()
    except (TypeError, ValueError):
        raise DataError(f"id {value!r} is not a JSON value; use --id-field") from None
    if key not in seen:
        seen.add(key)
        return True
    message = (
        f"id {value!r} is already in the index; each id is indexed once (re-adding would "
        "double its matches): drop the record, or pass --on-error skip to skip such records"
    )
    if on_error == "fail":
        raise DataError(message)
    stats.skip(message)
    return False


def _busy(exc: DirectoryBusyError) -> DataError:
    return DataError(f"{exc} (without --no-wait this command waits)")


@index_group.command("build", epilog=EXAMPLES)
@click.argument("directory")
@_with_inputs
@click.option("--k", "k", type=click.IntRange(0, 63), default=3)
@click.option("--force", is_flag=True, help="Replace an existing index directory.")
@fingerprinter_options
def build_command(
    directory: str,
    inputs: tuple[str, ...],
    k: int,
    force: bool,
    config_path: str | None,
    idf_path: str | None,
    **options: Any,
) -> None:
    """Create index DIRECTORY from INPUT files (texts without features are not indexed)."""
    _local_only(directory)
    check_inputs(inputs, options["fmt"])
    inputs = expand_patterns(inputs)
    if os.path.exists(directory) and not force:
        raise usage_error(
            f"{directory!r} exists; pass --force to replace it or use `neardup index add`"
        )
    if _holds_other_data(directory):
        raise usage_error(
            f"{directory!r} is not a neardup index directory (no CURRENT); "
            "not replacing it even with --force: choose another directory"
        )
    fp = build_fingerprinter(config_path, idf_path)
    index, ids = HammingIndex(k=k), JsonColumn.of([])
    stats = _add_inputs(index, ids, fp, inputs, options)
    try:
        with atomic_directory(directory, wait=not options["no_wait"]) as version:
            write_index_files(index, version, fingerprinter=fp, external_ids=ids)
    except DirectoryBusyError as exc:
        raise _busy(exc) from None
    click.echo(
        f"indexed {len(ids):,} of {stats.documents:,} documents (skipped "
        f"{stats.skipped:,}, no features {stats.documents - stats.skipped - len(ids):,}) "
        f"-> {directory}",
        err=True,
    )


@index_group.command("add", epilog=EXAMPLES)
@click.argument("directory")
@_with_inputs
@config_option("Only checked: must equal the index's config.")
def add_command(
    directory: str, inputs: tuple[str, ...], config_path: str | None, **options: Any
) -> None:
    """Add INPUT documents to an existing index DIRECTORY (same fingerprinter config).

    The whole read-add-write runs under DIRECTORY's writer lock.
    """
    _local_only(directory)
    check_inputs(inputs, options["fmt"])
    inputs = expand_patterns(inputs)
    _open(directory)  # clear errors before taking the lock
    try:
        with atomic_directory(directory, wait=not options["no_wait"]) as version:
            saved = _open(directory, current_version(directory))
            fp, ids, index = saved.fingerprinter, saved.external_ids, saved.index
            assert fp is not None and ids is not None
            _check_config(directory, fp, config_path)
            before = len(ids)
            stats = _add_inputs(index, ids, fp, inputs, options)
            write_index_files(index, version, fingerprinter=fp, external_ids=ids)
    except DirectoryBusyError as exc:
        raise _busy(exc) from None
    click.echo(
        f"added {len(ids) - before:,} of {stats.documents:,} documents -> {directory} "
        f"({len(ids):,} in all)",
        err=True,
    )


@index_group.command("query", epilog=EXAMPLES)
@click.argument("directory")
@click.argument("texts", nargs=-1)
@click.option("--file", "query_file", help="Queries from a file (JSONL/CSV/Parquet/txt).")
@click.option("--text-field", default="text")
@click.option(
    "--k",
    "k",
    type=click.IntRange(0, 63),
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
    saved = _open(directory)
    index, ids, fp = saved.index, saved.external_ids, saved.fingerprinter
    assert fp is not None and ids is not None
    _check_config(directory, fp, config_path)
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
    saved = _open(directory)
    assert saved.fingerprinter is not None and saved.external_ids is not None
    info = {
        "format": "neardup-hamming-index v2",
        "k": saved.index.k,
        "documents": len(saved.external_ids),
        "live": len(saved.index),
        "config_id": saved.config_id,
        "fingerprinter": saved.fingerprinter.get_config(),
        "index": saved.index.describe(),
    }
    click.echo(json.dumps(info, indent=2, ensure_ascii=False, default=str))
