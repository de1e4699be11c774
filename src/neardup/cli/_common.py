"""Shared CLI plumbing: error mapping, input handling, fingerprinter options, progress."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, fields
from typing import Any, Protocol, TypeVar, cast

import click

from neardup import _fs
from neardup._extras import MissingExtraError
from neardup.errors import NeardupError
from neardup.features.idf import IdfTable
from neardup.fingerprint import Fingerprinter
from neardup.io import (
    FORMATS,
    Document,
    FormatError,
    Record,
    detect_format,
    detect_output_format,
    iter_document_records,
)
from neardup.io.documents import EPOCH_UNITS, ReadStats
from neardup.io.partitions import part_sort_key
from neardup.io.readers import Row, list_parts, open_text
from neardup.io.writers import make_temp, remove_stale_temps

F = TypeVar("F", bound=Callable[..., Any])
ENGINES = ("local", "spark")


class DataError(click.ClickException, NeardupError):
    """Bad data in an input file (exit code 1)."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"neardup: error: {one_line(self.format_message())}", err=True)


def one_line(message: str) -> str:
    """The message with line breaks escaped: errors are one line, whatever the data holds.

    >>> one_line("bad value 'a\\nb'")
    "bad value 'a\\\\nb'"
    """
    return message.replace("\r", "\\r").replace("\n", "\\n")


@contextmanager
def disk_errors(what: str, *left: str) -> Iterator[None]:
    """A disk failure inside (full disk, file size limit) as one line naming ``what`` and the
    cause, exit 1 (bad data or I/O; 2 is for usage), saying that ``left`` (the outputs not
    replaced) were left as they were.

    >>> with disk_errors("cannot write o.jsonl", "o.jsonl"):
    ...     raise OSError(27, "File too large")
    Traceback (most recent call last):
    neardup.cli._common.DataError: cannot write o.jsonl: File too large; o.jsonl was left as it was
    """
    kept = [x for x in left if x != "-"]  # (stdout cannot be left as it was)
    was = f"; {kept[0]} was left as it was" if len(kept) == 1 else ""
    if len(kept) > 1:
        was = f"; {', '.join(kept[:-1])} and {kept[-1]} were left as they were"
    try:
        yield
    except BrokenPipeError:  # `| head`: the CLI stops quietly
        raise
    except IsADirectoryError:  # a folder where the file goes: the path given is wrong
        raise usage_error(f"{what}: it is a directory; give a file path{was}") from None
    except OSError as exc:
        cause = exc.strerror or str(exc)
        if type(exc) is OSError and exc.errno is None and "written" in cause:
            cause += ": a short write (a full disk or a file size limit)"  # numpy's, no errno
        where = f" ({exc.filename})" if exc.filename else ""
        raise DataError(f"{what}: {cause}{where}{was}") from None


def usage_error(message: str) -> click.UsageError:
    """A usage error (exit code 2), shown as one line."""
    return click.UsageError(message)


def check_inputs(inputs: tuple[str, ...], fmt: str | None) -> tuple[str, ...]:
    """Fail early, as a usage error, on missing files or undetectable formats.

    Returns the files to read: a folder of parts is expanded into its part files (a folder of
    ``.txt`` files stays one input); a URL (:mod:`neardup._fs`) with ``*``, ``?`` or ``[``
    into the objects it matches, in a folder's part order.
    """
    if not inputs:
        raise usage_error("no INPUT given; pass one or more files, a folder, or - for stdin")
    if inputs.count("-") > 1:
        raise usage_error("stdin (-) can be read only once")
    files: list[str] = []
    try:
        for path in inputs:
            files += _input_files(path, fmt)
    except MissingExtraError as exc:
        raise usage_error(str(exc)) from None
    return tuple(files)


def expand_patterns(inputs: tuple[str, ...]) -> tuple[str, ...]:
    """``inputs`` with each URL pattern replaced by its matches (files and folders as given)."""
    return tuple(p for given in inputs for p in _expand(given))


def _expand(path: str) -> list[str]:
    """A URL pattern's matches (the shell expands local ones); others as given."""
    if not _fs.is_remote(path) or not any(c in path for c in "*?["):
        return [path]
    found = _fs.expand_glob(path)
    if not found:
        raise usage_error(f"input {path!r} matches no file")
    return sorted(found, key=part_sort_key)  # as a folder's parts: day=2 before day=10


def _input_files(given: str, fmt: str | None) -> list[str]:
    files: list[str] = []
    for path in _expand(given):
        if path != "-" and not _fs.exists(path):
            raise usage_error(f"input {path!r} does not exist")
        try:
            kind = detect_format(path, fmt)
            files += list_parts(path, fmt)
        except FormatError as exc:
            raise usage_error(str(exc)) from None
        if kind == "txt" and not _fs.isdir(path):
            raise usage_error(f"{path!r}: the txt format reads a folder of .txt files")
        if kind == "parquet" and path == "-":
            raise usage_error("Parquet cannot be read from stdin; pass a file path")
    return files


def input_files(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Click callback: each file to read exists (a local path that is no folder, or a URL)."""
    for path in (value,) if isinstance(value, str) else value or ():
        try:
            if not _fs.exists(path):
                raise click.BadParameter(f"{path!r} does not exist")
            if _fs.isdir(path):
                raise click.BadParameter(f"{path!r} is a folder; give a file")
        except MissingExtraError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def output_path_or_usage_error(
    out: str, inputs: tuple[str, ...] = (), option: str = "--out"
) -> str:
    """The output format for ``out``, or a usage error when the extension is unknown or
    ``out`` is one of ``inputs`` (after resolving symlinks) or inside an input folder; the
    messages name ``option``, the option that gave the path (``--clusters``, ``--pairs``).

    >>> try:
    ...     output_path_or_usage_error("x.csv", ("x.csv",), "--pairs")
    ... except click.UsageError as e:
    ...     print(e.message[:28])
    --pairs 'x.csv' is the input
    """
    try:
        kind = detect_output_format(out)
        _fs.check_writable(out, option)
    except (FormatError, ValueError) as exc:
        raise usage_error(str(exc)) from None
    if _fs.is_remote(out):  # object stores have no folders to check; the store is asked at the end
        try:
            _fs.filesystem(out)  # a missing store library: before the work, not after it
        except MissingExtraError as exc:
            raise usage_error(str(exc)) from None
        _check_not_an_input(out, inputs, option)
        return kind
    out = _fs.local(out)
    parent = os.path.dirname(os.path.abspath(out))
    if out != "-" and not os.path.isdir(parent):
        raise usage_error(f"output folder {parent!r} does not exist")
    if out != "-":
        _check_not_an_input(out, inputs, option)
    return kind


def _check_not_an_input(out: str, inputs: tuple[str, ...], option: str) -> None:
    if _fs.is_remote(out):
        for path in inputs:
            if out == path or out.startswith(path.rstrip("/") + "/"):
                raise usage_error(
                    f"{option} {out!r} is (inside) the input {path!r}; it would be overwritten or "
                    "read as input: write elsewhere"
                )
        return
    real = os.path.realpath(out)
    for path in inputs:
        if path == "-" or _fs.is_remote(path):
            continue
        given = _fs.local(path)  # file:// inputs are local paths
        src = os.path.realpath(given)
        same = real == src or (
            os.path.exists(out) and os.path.exists(given) and os.path.samefile(out, given)
        )
        if same:
            raise usage_error(
                f"{option} {out!r} is the input {path!r}; it would be overwritten: write elsewhere"
            )
        if os.path.isdir(src) and real.startswith(src.rstrip(os.sep) + os.sep):
            raise usage_error(
                f"{option} {out!r} is inside the input folder {path!r} (the next run would read "
                "it as input): write elsewhere"
            )


@contextmanager
def materialized_stdin(inputs: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Copy stdin to a temporary file so it can be read twice; yields the new input list.

    The spool's name carries host and PID, so a spool left by a killed run (``kill -9``) is
    removed by the next run that spools stdin; SIGTERM/SIGHUP unwind normally (see ``main``).
    """
    if "-" not in inputs:
        yield inputs
        return
    tmpdir = tempfile.gettempdir()
    remove_stale_temps(tmpdir, "neardup-stdin")
    fd, tmp = make_temp(tmpdir, "neardup-stdin", ".tmp.jsonl")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        yield tuple(tmp if p == "-" else p for p in inputs)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)


def check_jobs(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Click callback: ``-j`` is ``-1`` (all cores) or a positive count."""
    if value == -1 or value >= 1:
        return value
    raise click.BadParameter(
        f"{value} is not a worker count; use a number >= 1, or -1 for all cores"
    )


def epoch_unit_option(func: F) -> F:
    """Add ``--epoch-unit`` (how numeric timestamps are read)."""
    return click.option(
        "--epoch-unit",
        type=click.Choice(EPOCH_UNITS),
        default="auto",
        help="Unit of numeric timestamps. auto: below 1e11 seconds, below 1e14 milliseconds, "
        "below 1e17 microseconds (the counts go in the summary).",
    )(func)


def _stack(func: F, decorators: list[Callable[[Any], Any]]) -> F:
    """Apply ``decorators`` so that they appear in ``--help`` in list order."""
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def engine_options(func: F) -> F:
    """``--engine``, ``--spark-master`` and ``--spark-conf`` (the engine is
    :mod:`neardup.spark.cli`'s)."""
    return _stack(
        func,
        [
            click.option(
                "--engine",
                type=click.Choice(ENGINES),
                default="local",
                help="local: this process; spark: Apache Spark (needs neardup[spark] and Java "
                "17), same decisions.",
            ),
            click.option(
                "--spark-master",
                default=None,
                help="Spark master for --engine spark (default local[*]; under spark-submit the "
                "submitted master).",
            ),
            click.option(
                "--spark-conf",
                multiple=True,
                metavar="KEY=VALUE",
                help="Spark setting for --engine spark (repeatable), e.g. "
                "spark.executor.memory=4g.",
            ),
        ],
    )


def input_options(*, id_field: bool = False) -> Callable[[F], F]:
    """``INPUT...``, ``--format``, ``--text-field`` (``--id-field``) and ``--on-error``: how
    every command that reads documents reads them (one definition, one help text)."""
    decorators = [
        click.argument("inputs", nargs=-1, metavar="INPUT..."),
        click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS),
            help="Input format (default: from the extension).",
        ),
        click.option("--text-field", default="text"),
    ]
    if id_field:
        decorators.append(
            click.option(
                "--id-field",
                default="id",
                help="Id field; records without it (or null) are named by their 0-based position. "
                "Ids shared by several documents make the output's ids ambiguous: the summary "
                "warns with counts.",
            )
        )
    decorators.append(
        click.option(
            "--on-error",
            type=click.Choice(["fail", "skip"]),
            default="fail",
            help="Bad rows: stop with exit code 1, or skip and count.",
        )
    )
    return lambda func: _stack(func, decorators)


@dataclass(frozen=True)
class ReadOptions:
    """What :func:`read_options` gave a command: its inputs, ``--out`` and how records are
    read."""

    inputs: tuple[str, ...]
    out: str
    fmt: str | None
    text_field: str
    id_field: str
    on_error: str
    time_field: str | None
    epoch_unit: str


def read_options(time_help: str) -> Callable[[F], F]:
    """``INPUT...``, ``--format``, ``--text-field``, ``--id-field``, ``--on-error``, ``--out``,
    ``--time-field`` (its help: ``time_help``) and ``--epoch-unit``, in that order in
    ``--help``, handed to the command as one ``reading`` :class:`ReadOptions` (the commands
    that read documents by id and time declare them once, here)."""
    names = [f.name for f in fields(ReadOptions)]

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            reading = ReadOptions(**{name: kwargs.pop(name) for name in names})
            return func(reading=reading, **kwargs)

        time_option = click.option("--time-field", default=None, help=time_help)
        options = [input_options(id_field=True), out_option(), time_option, epoch_unit_option]
        return _stack(cast(F, command), options)

    return decorate


class InputSettings(Protocol):
    """What :func:`input_options`, ``--time-field`` and ``--epoch-unit`` gave a command."""

    text_field: str
    id_field: str
    time_field: str | None
    on_error: str
    epoch_unit: str
    utf8_ids: bool  # ids with lone surrogates are bad rows (the output is CSV or Parquet)


def document_records(
    opts: InputSettings, rows: Iterable[Row], stats: ReadStats, max_time: float | None = None
) -> Iterator[tuple[Document, Record]]:
    """The valid documents of ``rows`` (with their records) as the command's options say."""
    return iter_document_records(
        rows,
        text_field=opts.text_field,
        id_field=opts.id_field,
        time_field=opts.time_field,
        on_error=opts.on_error,  # type: ignore[arg-type]
        stats=stats,
        epoch_unit=opts.epoch_unit,  # type: ignore[arg-type]
        max_time=max_time,
        utf8_ids=opts.utf8_ids,
    )


def out_option(
    help: str = "Output file: .jsonl, .csv (either also .gz), .parquet, or - (JSONL to stdout).",
) -> Callable[[F], F]:
    """The required ``--out``/``-o``."""
    return click.option("--out", "-o", required=True, help=help)


def config_option(
    help: str = "Fingerprinter config JSON (Fingerprinter.get_config(); default: the library "
    "default).",
) -> Callable[[F], F]:
    """``--config``: a fingerprinter config JSON file (what it is for, in ``help``)."""
    return click.option("--config", "config_path", type=click.Path(dir_okay=False), help=help)


def fingerprinter_options(func: F) -> F:
    """Add ``--config`` (fingerprinter config JSON) and ``--idf`` (an IDF table file)."""
    func = click.option(
        "--idf",
        "idf_path",
        type=click.Path(dir_okay=False),
        help="IDF table from `neardup idf fit` (TF-IDF weighting).",
    )(func)
    return config_option()(func)


def _load_idf(path: str) -> IdfTable:
    """``--idf``: a local file, or a URL's object read through a local copy."""
    if not _fs.is_remote(path):
        return IdfTable.load(_fs.local(path))
    with tempfile.TemporaryDirectory(prefix="neardup-idf-") as tmp:
        copy = os.path.join(tmp, "idf.tsv")
        with open(copy, "wb") as f:
            f.write(_fs.read_bytes(path))
        try:
            return IdfTable.load(copy)
        except ValueError as exc:  # name the object, not the copy
            raise ValueError(str(exc).replace(copy, path)) from None


def build_fingerprinter(
    config_path: str | None, idf_path: str | None = None, bits: int | None = None
) -> Fingerprinter:
    """The fingerprinter for ``--config`` / ``--idf`` (and ``--bits`` where offered)."""
    idf = None
    if idf_path is not None:
        try:
            idf = _load_idf(idf_path)
        except (OSError, ValueError) as exc:
            raise usage_error(f"cannot read --idf {idf_path!r}: {exc}") from None
    try:
        if config_path is None:
            extra: dict[str, Any] = {} if idf is None else {"weighting": "tfidf", "idf": idf}
            return Fingerprinter(bits=bits or 64, **extra)
        cfg = _read_json(config_path, "--config")
        known = set(Fingerprinter().get_config())
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise usage_error(
                f"--config {config_path!r}: unknown key(s) {', '.join(map(repr, unknown))}; "
                f"known keys: {', '.join(sorted(known))}"
            )
        if bits is not None:
            cfg["bits"] = bits
        return Fingerprinter.from_config(cfg, idf=idf)
    except (TypeError, ValueError) as exc:
        raise usage_error(f"bad fingerprinter settings: {exc}") from None


def _read_json(path: str, what: str) -> dict[str, Any]:
    try:
        with open_text(path) as f:  # a local path or a URL
            data = json.load(f)
    except (OSError, ValueError) as exc:  # ValueError: JSON or UTF-8
        raise usage_error(f"cannot read {what} {path!r}: {exc}") from None
    if not isinstance(data, dict):
        raise usage_error(f"{what} {path!r} must hold a JSON object")
    return data


@contextmanager
def progress(description: str, enabled: bool | None = None) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; shows a rich progress line on a TTY only (stderr)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    cols = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed:,} docs"),
        TimeElapsedColumn(),
    )
    with Progress(*cols, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda n: bar.advance(task, n)


def nothing_read_error(stats: ReadStats) -> DataError:
    """Every row was skipped: a data error naming the commonest reason (nothing is written)."""
    return DataError(stats.nothing_read())


def read_notes(
    stats: ReadStats, id_field: str, epoch_unit: str, ids_in: str = "duplicate_of"
) -> list[str]:
    """Warnings about ids and timestamp units for the summary (empty when all is clear);
    ``ids_in``: the output's fields that name documents by id (the command's words)."""
    notes = []
    shared, distinct = stats.shared_ids() if stats.track_ids else (0, 0)
    if shared:
        notes.append(
            f"warning: {shared:,} documents share their id with another ({distinct:,} ids "
            f"repeated), so {ids_in} is ambiguous for them: use a unique --id-field "
            f"(now {id_field!r})"
        )
    if stats.positional_ids and stats.positional_ids < stats.documents:
        notes.append(
            f"note: {stats.positional_ids:,} documents have no {id_field!r} (or null): "
            "named by their 0-based position"
        )
    if stats.epoch_units:
        read = ", ".join(f"{n:,} as {u}" for u, n in sorted(stats.epoch_units.items()))
        notes.append(f"epoch timestamps ({epoch_unit}): {read}")
    return notes
