"""Read JSONL (``.gz`` too) and Parquet inputs on Spark into positioned documents.

Positions are the local engine's: 0, 1, 2, ... over the valid records in input order (files in
the order given, a local folder's parts in the local reader's natural order with their Hive
partition columns, lines or rows in file order). JSONL files are read as lines
(``textFile`` keeps a file's lines in order across partitions) and numbered by
``zipWithIndex``; Parquet rows are ordered by ``(file, row index)`` from Spark's hidden
``_metadata`` columns. Every record is validated by :func:`neardup.io.record_to_document`, the
local engine's rule, so errors read the same: ``docs.jsonl:12: missing text field 'text'``.
Any Hadoop-compatible path works (``hdfs://``, ``s3a://``, ``file://``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from neardup.io import InputError, ReadStats, detect_format, record_to_document
from neardup.io.partitions import add_to_line, partition_values, root_of
from neardup.io.readers import jsonl_record, list_parts

SPARK_FORMATS = ("jsonl", "parquet")
DOCS_SCHEMA = "pos long, id string, text string, ts double, record string"


@dataclass(frozen=True)
class Fields:
    """Which record fields hold the text, id and timestamp (as in ``neardup dedup``)."""

    text: str = "text"
    id: str = "id"
    time: str | None = None
    epoch_unit: str = "s"
    roots: tuple[str, ...] = ()  # input folders the paths were listed from (partition columns)
    max_time: float | None = None  # later timestamps are refused (--max-future, set on the driver)
    utf8_ids: bool = False  # ids with lone surrogates are refused (the output is CSV or Parquet)


def _validate(item: tuple[str, Any], fields: Fields) -> tuple[Any, ...]:
    """``(where, raw)`` -> ``(error, id_json, text, ts, record_json)``; error is None when valid.

    The local engine's rules: :func:`neardup.io.readers.jsonl_record` for a line,
    :func:`neardup.io.record_to_document` for a record (a missing or null id becomes the
    position, filled in once positions are known).
    """
    where, raw = item
    try:
        if isinstance(raw, bytes | bytearray):
            rec = jsonl_record(bytes(raw), where)
            if isinstance(rec, InputError):
                raise rec
        else:
            rec = raw
        doc = record_to_document(
            rec,
            0,
            where,
            text_field=fields.text,
            id_field=fields.id,
            time_field=fields.time,
            epoch_unit=fields.epoch_unit,  # type: ignore[arg-type]
            max_time=fields.max_time,
            utf8_ids=fields.utf8_ids,
        )
    except InputError as exc:
        return (str(exc), where, None, None, None)
    has_id = rec.get(fields.id) is not None
    id_json = json.dumps(doc.id, ensure_ascii=False, default=str) if has_id else None
    record = json.dumps(rec, ensure_ascii=False, default=str)
    return (None, id_json, doc.text, doc.timestamp, record)


_BOM = b"\xef\xbb\xbf"


def _with_partitions(item: tuple[str, Any], values: dict[str, Any]) -> tuple[str, Any]:
    where, raw = item
    if isinstance(raw, bytes | bytearray):
        return where, add_to_line(bytes(raw), values)
    rec = dict(raw)
    for name, value in values.items():
        rec.setdefault(name, value)
    return where, rec


def _line_row(path: str, line: bytes, index: int) -> tuple[str, bytes]:
    """``(where, line)`` with the local reader's 1-based line number (a UTF-8 BOM dropped)."""
    return f"{path}:{index + 1}", line.removeprefix(_BOM) if index == 0 else line


def _jsonl_rows(spark: SparkSession, path: str) -> Any:
    lines: Any = spark.sparkContext.textFile(path, use_unicode=False).zipWithIndex()
    return lines.filter(lambda x: x[0].strip()).map(lambda x: _line_row(path, x[0], x[1]))


def _parquet_rows(spark: SparkSession, path: str) -> Any:
    df = spark.read.parquet(path)
    cols = df.columns
    meta = df.select(
        *cols, F.col("_metadata.file_path").alias("_f"), F.col("_metadata.row_index").alias("_r")
    ).orderBy("_f", "_r")
    single = os.path.isfile(path)  # a file names itself; a directory names its part files

    def where(row: Any) -> tuple[str, dict[str, Any]]:
        name = path if single else row["_f"]
        return (f"{name}:row {row['_r'] + 1}", {c: row[c] for c in cols})

    return meta.rdd.map(where)


def read_documents(
    spark: SparkSession,
    inputs: tuple[str, ...],
    fmt: str | None,
    fields: Fields,
    on_error: str,
) -> tuple[DataFrame, ReadStats]:
    """``(pos, id, text, ts, record)`` for the valid records of ``inputs``, and read stats.

    ``id`` is the JSON of the record's id (its position when it has none); ``record`` the
    record as JSON. With ``on_error="fail"`` the first bad record in input order raises
    :class:`InputError`; with ``"skip"`` bad records are counted in the stats.
    """
    parts = []
    for path in inputs:
        kind = detect_format(path, fmt)
        if kind not in SPARK_FORMATS:
            raise InputError(
                f"{path}: the Spark engine reads {' and '.join(SPARK_FORMATS)}; convert "
                f"{kind} input or use --engine local"
            )
        listed = os.path.isdir(path)  # a local folder (the CLI passes its parts, with roots)
        for part in list_parts(path, fmt) if listed else [path]:
            rows = _jsonl_rows(spark, part) if kind == "jsonl" else _parquet_rows(spark, part)
            root = path if listed else root_of(part, fields.roots)
            values = {} if root is None else partition_values(root, part)
            if values:  # Hive-style name=value folders: columns, as the local reader adds them
                rows = rows.map(lambda item, v=values: _with_partitions(item, v))
            parts.append(rows)
    rows = spark.sparkContext.union(parts) if len(parts) > 1 else parts[0]
    parsed = rows.map(lambda item: _validate(item, fields)).cache()
    stats = ReadStats()
    bad = parsed.filter(lambda r: r[0] is not None)
    first = bad.map(lambda r: (r[0], r[1])).take(1 if on_error == "fail" else 20)
    if first and on_error == "fail":
        parsed.unpersist()
        raise InputError(first[0][0])
    for message, where in first:
        stats.skip(message, where)
    stats.skipped = bad.count() if first else 0
    good = parsed.filter(lambda r: r[0] is None).zipWithIndex()
    docs = spark.createDataFrame(good.map(_positioned), DOCS_SCHEMA)
    return docs, stats


def _positioned(item: tuple[tuple[Any, ...], int]) -> tuple[Any, ...]:
    (_, id_json, text, ts, record), pos = item
    return (pos, id_json if id_json is not None else str(pos), text, ts, record)


def iter_lines(df: DataFrame) -> Iterator[Any]:
    """Rows of ``df`` in position order, streamed to the driver one partition at a time."""
    return df.orderBy("pos").toLocalIterator()
