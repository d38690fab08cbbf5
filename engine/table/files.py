"""Questions about a table's files: their sizes (a ``table gc`` dry run) and which older
snapshots hold different files from the current one (the rollback targets worth offering).

The files may be local paths or object-store URIs; :mod:`engine.table.fs` reads either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import numpy as np

from engine.core.errors import SnapshotNotFoundError
from engine.table import fs

if TYPE_CHECKING:
    from engine.table.store import TableStore

__all__ = ["files_bytes", "rollback_targets"]


def files_bytes(paths: Iterable[str]) -> int:
    """Total bytes of the files among ``paths`` that still exist (what a gc would reclaim).

    Example:
    >>> files_bytes(["/no/such/file.parquet"])
    0
    """
    return sum(fs.size(p) for p in paths if fs.exists(p))


def rollback_targets(store: "TableStore", name: str) -> list[str]:
    """Ids of the snapshots a rollback of ``name`` would change anything with, newest first.

    Left out: the current snapshot and its *twins*, the older snapshots holding exactly its
    files (after a rollback to snapshot 1, snapshot 1 is the current one's twin; rolling
    back to it would publish the same table again, so the dashboard must not offer it as
    its default target). Also left out: snapshots the format no longer
    has (expired).
    """
    fmt = store.format(name)
    current = fmt.current_snapshot()
    now: np.ndarray | None = None  # the current files, sorted: only if a count ties
    out = []
    for info in reversed(fmt.history()):
        if info.id == current.id:
            continue
        try:
            older = fmt.snapshot(info.id)
        except SnapshotNotFoundError:
            continue
        if len(older.zonemaps()) != len(current.zonemaps()):
            out.append(info.id)
            continue
        now = _sorted_paths(current) if now is None else now
        if not np.array_equal(_sorted_paths(older), now):
            out.append(info.id)
    return out


def _sorted_paths(snapshot) -> np.ndarray:
    """A snapshot's file paths, sorted, from its zonemap arrays: a set of one ``Partition``
    object per file would cost seconds at 1,000,000 files on every Approve-and-run rerun."""
    return np.sort(snapshot.zonemaps().paths.astype(str))
