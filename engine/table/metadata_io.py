"""The workspace's table metadata on the local disk: written whole or not at all.

Table descriptions, snapshot headers, manifests and the current-snapshot pointer are small
local files (never on object storage, :mod:`engine.table.fs`). Each is written to a
temporary name, fsynced and renamed over its final name (``os.replace`` is atomic), so a
reader sees the old file or the new one, never half of one; one committer at a time holds
an ``fcntl`` lock on the folder, across processes. A damaged JSON file is reported as a
:class:`~engine.core.errors.DataFileError` naming the file and what to do, never as a
Python error. Timestamps are UTC, ISO-8601 with microseconds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import secrets
from typing import Any, Iterator

import pyarrow.parquet as pq

from engine.core.errors import DataFileError

__all__ = ["LOCK_FILE", "fsync_dir", "iso", "locked", "parse_time", "read_json", "utc_now",
           "write_atomic", "write_parquet_atomic"]

#: the lock file inside a locked folder (its content is empty: ``flock`` is the lock)
LOCK_FILE = ".lock"


def utc_now() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.timezone.utc)


def iso(moment: dt.datetime) -> str:
    """``moment`` as metadata records it.

    >>> iso(dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
    '2024-01-02T03:04:05.000000+00:00'
    """
    return moment.isoformat(timespec="microseconds")


def parse_time(text: str) -> dt.datetime:
    """A recorded time; one without a zone is UTC.

    >>> parse_time("2024-01-02T03:04:05")
    datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    """
    moment = dt.datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


@contextlib.contextmanager
def locked(directory: str) -> Iterator[None]:
    """Hold the exclusive lock of ``directory`` (created if missing) for the block."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, LOCK_FILE), "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def read_json(path: str, what: str, hint: str) -> dict:
    """A metadata JSON object, or DataFileError naming the file, what it is and what to do
    (a damaged file is reported as such, never as a Python error). A missing file raises
    FileNotFoundError for the caller to name."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFileError(f"{path}: the {what} is damaged ({exc}); {hint}") from None
    if not isinstance(data, dict):
        raise DataFileError(f"{path}: the {what} is damaged (not a JSON object); {hint}")
    return data


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file, fsync, and os.replace."""
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_parquet_atomic(path: str, table: Any) -> None:
    """Write the Arrow ``table`` to ``path`` (zstd) via a temporary file, fsync, os.replace."""
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    pq.write_table(table, tmp, compression="zstd")
    with open(tmp, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def fsync_dir(path: str) -> None:
    """Make the renames inside ``path`` durable (best effort: not every filesystem can)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
