"""Readers and writers for document collections (JSONL, CSV, Parquet, text folders; gz, stdin).

>>> from neardup.io import iter_records, iter_documents, open_writer
"""

from __future__ import annotations

from neardup.io.documents import (
    Document,
    OnError,
    ReadStats,
    iter_document_records,
    iter_documents,
    parse_timestamp,
    parse_window,
    record_to_document,
)
from neardup.io.readers import (
    FORMATS,
    FormatError,
    InputError,
    Record,
    detect_format,
    iter_records,
    open_binary,
)
from neardup.io.writers import WRITE_FORMATS, RecordWriter, detect_output_format, open_writer

__all__ = [
    "FORMATS",
    "WRITE_FORMATS",
    "Document",
    "FormatError",
    "InputError",
    "OnError",
    "ReadStats",
    "Record",
    "RecordWriter",
    "detect_format",
    "detect_output_format",
    "iter_document_records",
    "iter_documents",
    "iter_records",
    "open_binary",
    "open_writer",
    "parse_timestamp",
    "parse_window",
    "record_to_document",
]
