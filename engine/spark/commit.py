"""One batch's commit and the fate of its files: the executor's critical section.

A batch writes its files under a fresh folder (``out_dir``), then publishes one snapshot
through the table's format. Until the format's atomic write (Iceberg's catalog update, the
Delta log entry, the native pointer's rename) has returned, a failure means nothing was
committed and the folder is removed. From the moment it has returned, the new snapshot names
those files and nothing may delete them, whatever happens next:

* the format's commit is split at that write (:meth:`TableFormat.publish_rewrite`), and
  :class:`BatchFiles` records the new snapshot's id as soon as the write returns, before any
  check that follows it (:attr:`PublishedRewrite.verify`);
* SIGINT and SIGTERM are deferred across the publish and that record
  (:func:`engine.core.signals.deferred_signals`): a Ctrl-C (or pyspark's SIGINT handler, or
  a terminal's Ctrl-C to the whole process group) lands after the batch is marked
  committed; a SIGKILL cannot be deferred, and the atomic write leaves the table at the old
  or the new snapshot either way;
* a check after the commit that fails raises :class:`CommitVerificationError` ("committed,
  verification failed"), which reports the snapshot and keeps every file;
* a failure inside the publish whose outcome is unknown (an error raised after the catalog
  took the new metadata) is resolved by asking the table: when its current snapshot names
  a file of the folder, the batch committed (recorded as such) and the folder is kept; when
  the table cannot be read, the folder is kept too (an unreferenced leftover is for
  ``table gc``; a deleted committed file is lost data).

This module does not start Spark (removing the folder is the caller's function), so a test
can drive the same section over files it copied itself.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import CommitVerificationError
from engine.core.faults import crash_point
from engine.core.signals import deferred_signals
from engine.table import fs

if TYPE_CHECKING:
    from engine.table.formats.base import TableFormat
    from engine.table.model import Partition, Snapshot

__all__ = ["BatchFiles"]


class BatchFiles:
    """The folder one batch writes into, removed on leaving the block unless committed.

    ``with BatchFiles(fmt, table, out_dir, remove) as files: ...; files.commit(...)``:
    any exception before :meth:`commit`'s write returns removes ``out_dir`` (through
    ``remove(out_dir)``, best effort) and propagates; after it, nothing is removed.
    ``snapshot_id`` is the committed snapshot (None until then).
    """

    def __init__(self, fmt: "TableFormat", table: str, out_dir: str,
                 remove: Callable[[str], None]) -> None:
        self.fmt, self.table, self.out_dir, self.remove = fmt, table, out_dir, remove
        self.snapshot_id: str | None = None
        self._publishing = False
        self._on_commit: Callable[[str], None] | None = None

    def __enter__(self) -> "BatchFiles":
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.snapshot_id is not None or kind is None:
            return
        if self._publishing and self._named_by_table():
            return  # the write happened although the call failed: the files are the table's
        with contextlib.suppress(Exception):  # best effort; gc finds the rest
            self.remove(self.out_dir)

    def _named_by_table(self) -> bool:
        """Whether the table's current snapshot names a file of ``out_dir`` (True also when
        the table cannot be read: keeping an orphan is safe, deleting live data is not).
        When it does, the batch did commit: recorded, and ``on_commit`` told, as if the
        write had answered."""
        try:
            snap = self.fmt.current_snapshot()
            paths = snap.zonemaps().paths.tolist()
        except Exception:  # noqa: BLE001 - unknown outcome: keep the files
            return True
        root = fs.normalize(fs.local_path(self.out_dir))
        if not any(fs.is_under(fs.normalize(fs.local_path(p)), root) for p in paths):
            return False
        self.snapshot_id = snap.id
        if self._on_commit is not None:
            with contextlib.suppress(Exception):
                self._on_commit(snap.id)
        return True

    def commit(self, base_snapshot_id: str, removed: Sequence[str], added: Sequence["Partition"],
               summary: Mapping[str, Any],
               on_commit: Callable[[str], None] | None = None) -> "Snapshot":
        """Publish ONE snapshot replacing ``removed`` with ``added`` through the format,
        mark it committed the moment the write returns (then ``on_commit(snapshot_id)``,
        whose failure is ignored: the commit stands), with SIGINT and SIGTERM deferred
        across both; then verify it. Returns the new snapshot; a failed verification raises
        :class:`CommitVerificationError` naming it."""
        self._on_commit = on_commit
        with deferred_signals():
            self._publishing = True
            published = self.fmt.publish_rewrite(base_snapshot_id, list(removed), list(added),
                                                  dict(summary))
            self.snapshot_id = published.snapshot_id
            if on_commit is not None:
                with contextlib.suppress(Exception):
                    on_commit(published.snapshot_id)
        crash_point("after_commit")
        try:
            return published.verify()
        except Exception as exc:  # noqa: BLE001 - the commit stands; report it as such
            raise CommitVerificationError(
                f"table {self.table!r}: snapshot {published.snapshot_id} was committed, but "
                f"checking it failed: {type(exc).__name__}: {exc}; its files are kept "
                f"(`layout-advisor table rollback {self.table} --to {base_snapshot_id} --as "
                "ADMIN` restores the previous snapshot)",
                table=self.table, snapshot_id=published.snapshot_id) from exc
