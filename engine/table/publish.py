"""Publishing a newly written managed table: the checks and the Iceberg create commit that
the Spark ingest (:mod:`engine.spark.ingest`) and the Arrow demo writer
(:mod:`engine.scenarios.demo_table`) share, so the two writers cannot drift apart.

pyiceberg is imported only by :func:`publish_iceberg` (its import costs ~0.7 CPU-s, and
``import engine.api`` stays free of it for native tables; ``tests/engine/table/test_scale_imports.py``).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Sequence

from engine.core.errors import ExecutionError
from engine.table import footers
from engine.table.model import Partition, Snapshot

if TYPE_CHECKING:
    from engine.table.store import TableStore


def check_counts(partitions: Sequence[Partition], target_rows: int, total: int) -> None:
    """Every file holds ``target_rows`` rows except the last (1..target_rows), all of them
    ``total``: read back from the published snapshot before a build reports success.

    >>> from engine.table.model import Partition
    >>> parts = [Partition(path=f"f{i}", rows=r, bytes=1, columns={}) for i, r in enumerate((2, 2, 1))]
    >>> check_counts(parts, 2, 5)
    >>> check_counts(parts, 2, 6)
    Traceback (most recent call last):
    ...
    engine.core.errors.ExecutionError: micro-partitions are not exact: 3 files with rows [2, 2, 1]... (target 2, total 5 of 6)
    """
    counts = [p.rows for p in partitions]
    if (sum(counts) != total or any(r != target_rows for r in counts[:-1])
            or not counts or not 0 < counts[-1] <= target_rows):
        raise ExecutionError(f"micro-partitions are not exact: {len(counts)} files with rows "
                             f"{counts[:5]}... (target {target_rows}, total {sum(counts)} of {total})")


def publish_iceberg(store: "TableStore", catalog: Any, name: str, identifier: str, location: str,
                    written: Sequence[str], target_rows: int, total: int, source: str,
                    say: Callable[[str], None]) -> Snapshot:
    """Create the Iceberg table ``identifier`` at ``location`` over the ``written`` files
    (one append commit, metrics read by pyiceberg from their footers), register it in the
    workspace as ``name`` and check its row counts (:func:`check_counts`). If anything
    fails after the catalog entry exists, the entry is dropped before the error goes on;
    the caller removes the files and the workspace entry."""
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy, ~0.7 CPU-s at import

    tbl = iceberg.create_table(catalog, identifier, footers.read_arrow_schema(written[0]),
                               location=location)
    try:
        store.register_format(name, "iceberg", location, identifier=identifier, managed=True,
                              target_rows=target_rows)
        say(f"committing {len(written):,} files to iceberg table {identifier}")
        tbl.add_files([iceberg.file_uri(f) for f in written],
                      snapshot_properties={"la.operation": "create", "la.source": source})
        snap = store.current_snapshot(name)
        check_counts(sorted(snap.partitions, key=lambda p: p.path), target_rows, total)
    except BaseException:
        with contextlib.suppress(Exception):
            catalog.drop_table(identifier)
        raise
    return snap
