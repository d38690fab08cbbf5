"""The files a rewrite adds, checked again just before an Iceberg or Delta commit.

Between a run's verification and its commit, a file it wrote can be deleted (by hand, by
another tool's cleanup) or replaced. The native commit re-checks under its lock that every
added file exists with its verified size (:func:`engine.table.formats.native.check_files`); an Iceberg or Delta commit would otherwise publish a
snapshot naming a missing file (the table unreadable until rolled back), or a manifest
entry whose row count is not the file's. :func:`check_added` is the same check for those
formats, with the row count from the file's footer too; the commits call it last, just
before the catalog or log write (gc leaves a live run's files alone: leases).
"""

from __future__ import annotations

from typing import Sequence

import pyarrow.parquet as pq

from engine.core.errors import DataFileError
from engine.table import fs
from engine.table.model import Partition


def check_added(added: Sequence[Partition]) -> None:
    """Every added file exists with the size and row count it was verified at; else
    :class:`DataFileError` naming the file (nothing is committed)."""
    for p in added:
        if not fs.exists(p.path):
            raise DataFileError(f"{p.path}: a file this commit adds is gone (deleted by gc or "
                                "by hand?); nothing was committed")
        size = fs.size(p.path)
        if p.bytes and size != p.bytes:
            raise DataFileError(f"{p.path}: a file this commit adds is {size} bytes but was "
                                f"verified at {p.bytes}; nothing was committed")
        filesystem, inner = fs.filesystem(p.path)
        try:
            rows = pq.read_metadata(inner, filesystem=filesystem).num_rows
        except (OSError, ValueError) as exc:
            raise DataFileError(f"{p.path}: a file this commit adds cannot be read "
                                f"({str(exc).splitlines()[0]}); nothing was committed") from None
        if rows != p.rows:
            raise DataFileError(f"{p.path}: a file this commit adds holds {rows} rows but "
                                f"was verified at {p.rows}; nothing was committed")
