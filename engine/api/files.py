"""Data-file sizes for reports that list files, such as a ``table gc`` dry run.

The files may be local paths or object-store URIs; :mod:`engine.table.fs` reads either.
"""

from __future__ import annotations

from typing import Iterable

from engine.table import fs

__all__ = ["files_bytes"]


def files_bytes(paths: Iterable[str]) -> int:
    """Total bytes of the files among ``paths`` that still exist (what a gc would reclaim).

    Example:
    >>> files_bytes(["/no/such/file.parquet"])
    0
    """
    return sum(fs.size(p) for p in paths if fs.exists(p))
