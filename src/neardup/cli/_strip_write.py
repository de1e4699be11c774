"""``neardup overlap --strip OUT``: every input document written again with the passages an
earlier document already holds removed (:mod:`neardup.overlap.strip` decides what goes), its
other fields as read, and ``stripped_chars``: how many characters were removed (with templates
cut too, ``stripped_template_chars``: how many of them only because of a template). It removes
what ``--out`` reports: copies, templates only with ``--strip-templates`` (or ``--templates
keep``, which reports them)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any, Protocol

import click

from neardup.cli._common import InputSettings, document_records
from neardup.io import ReadStats, Record, open_writer
from neardup.io.partitions import root_of
from neardup.io.readers import iter_part_records
from neardup.overlap.strip import STRIP_TEMPLATES, strip_counted

__all__ = ["STRIPPED_CHARS", "STRIPPED_TEMPLATE_CHARS", "Spans", "strip_options", "write_stripped"]

STRIPPED_CHARS = "stripped_chars"
STRIPPED_TEMPLATE_CHARS = "stripped_template_chars"
#: the copy-side spans of each document with passages, by input position
Spans = dict[int, list[tuple[int, int]]]


class _Source(InputSettings, Protocol):
    roots: tuple[str, ...]
    fmt: str | None


def strip_options(func: Any) -> Any:
    """``--strip OUT``, ``--strip-min-length N`` and ``--strip-templates/--strip-copies-only``."""
    func = click.option(
        "--strip-templates/--strip-copies-only",
        default=STRIP_TEMPLATES,
        help="With --strip: also cut the templates of the collection that --out sets aside "
        "(bylines, datelines, signatures, rows of figures; counted apart in "
        "stripped_template_chars). The default cuts what --out reports: the copies (and "
        "the templates --templates keep reports), as a template is not a copy.",
    )(func)
    func = click.option(
        "--strip-min-length",
        type=click.IntRange(0),
        default=0,
        help="With --strip: copied stretches (passages merged) shorter than this many "
        "characters stay in [0: every reported passage goes].",
    )(func)
    return click.option(
        "--strip",
        "strip_out",
        default=None,
        help="Also write every document with the passages an earlier document (or --against) "
        "already holds removed, its other fields as read, and stripped_chars (characters "
        "removed): .jsonl, .csv (either also .gz), .parquet.",
    )(func)


def _records(read: _Source, paths: tuple[str, ...]) -> Iterator[tuple[int, str, Record]]:
    rows = chain.from_iterable(
        iter_part_records(p, root_of(p, read.roots), read.fmt) for p in paths
    )
    for doc, rec in document_records(read, rows, ReadStats()):
        yield doc.position, doc.text, rec


def write_stripped(
    out: str,
    read: _Source,
    paths: tuple[str, ...],
    spans: Spans,
    min_length: int,
    templates: Spans | None = None,
) -> tuple[int, int]:
    """Read ``paths`` again and write each document to ``out`` with ``spans`` (its copied
    passages) and ``templates`` (its templates, when given) cut out; returns the characters
    removed in all, and how many of them only because of a template."""
    total = by_templates = 0
    with open_writer(out) as writer:  # checked before the run (output_path_or_usage_error)
        for position, text, rec in _records(read, paths):
            more = None if templates is None else templates.get(position, [])
            cleaned, removed, of_templates = strip_counted(
                text, spans.get(position, []), more, min_length
            )
            extra: dict[str, int] = {}
            if of_templates is not None:
                extra[STRIPPED_TEMPLATE_CHARS] = of_templates
                by_templates += of_templates
            total += removed
            writer.write({**rec, read.text_field: cleaned, STRIPPED_CHARS: removed, **extra})
    return total, by_templates
