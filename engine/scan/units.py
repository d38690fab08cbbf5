"""Which unit the pruning figures count: files, and row groups where files hold several.

A reader (DuckDB, Spark, Trino) skips a whole file by its min/max, then, inside a file it
reads, every row group whose own min/max cannot match. The scan analysis
(:func:`engine.scan.fragment_scan.fragment_summary`) always counts files: scanned, pruned,
fully covered and boundary are files. At file level (the ``prune_row_groups`` setting off,
:func:`engine.scan.rowgroups.if_enabled`) a scanned file costs its whole bytes; at row-group
level, in a snapshot whose files hold several row groups, a scanned file costs only the
row groups a query meets, and the analysis adds the row groups read out of the table's
(``row_groups_read`` / ``row_groups``, a file of one row group counting one). Every view
that shows those figures names the unit with :meth:`CountUnit.label`.

Example (4 files of 10 row groups each, row-group level):
>>> import numpy as np
>>> count_unit(4, np.array([0, 10, 20, 30, 40]), 40, True).label()
'unit: files, charged by the row groups met (files hold 10 row groups each)'
>>> count_unit(4, None, 4, False).label()
'unit: files (a scanned file is read whole; prune_row_groups is off)'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from engine.scan import rowgroups

if TYPE_CHECKING:
    from engine.table.model import Snapshot
    from engine.table.store import TableStore

__all__ = ["CountUnit", "count_unit", "pruning_unit"]


@dataclass(frozen=True, slots=True)
class CountUnit:
    """The unit of a snapshot's pruning figures.

    ``unit``: what a scanned file is charged by, "row groups" (row-group level and some
    file holds several) or "files"; the counts are files either way. ``files``: the
    snapshot's files; ``total``: the units in the table (files, or row groups with a file
    of one counting one), both None at file level (nothing beyond the setting is read);
    ``multi_files``: files of several row groups; ``fewest`` / ``median`` / ``most``: row
    groups per file over those (0 when none);
    ``row_group_level``: the analysis charges row groups (the ``prune_row_groups`` setting)."""

    unit: str
    files: int | None
    total: int | None
    multi_files: int
    fewest: int
    median: int
    most: int
    row_group_level: bool

    @property
    def row_groups(self) -> bool:
        return self.unit == "row groups"

    def holding(self) -> str:
        """How many row groups the files hold, e.g. "files hold 10 each"; "" at file level."""
        if not self.row_groups:
            return ""
        if self.fewest == self.most:
            each = f"{self.most:,} row groups each"
        else:
            each = f"{self.fewest:,} to {self.most:,} row groups, {self.median:,} on median"
        if self.multi_files == self.files:
            return f"files hold {each}"
        return f"{self.multi_files:,} of {self.files:,} files hold {each}, the others one"

    def label(self) -> str:
        """One line naming the unit (module docstring's examples)."""
        if self.row_groups:
            return f"unit: files, charged by the row groups met ({self.holding()})"
        if self.row_group_level:
            return "unit: files (each holds one row group)"
        return "unit: files (a scanned file is read whole; prune_row_groups is off)"

    def file_label(self) -> str:
        """The line for a count of files that no query charges (a predicate's files, the
        partition table): the files, and the row groups inside them a reader also skips.

        >>> count_unit(2, np.array([0, 10, 20]), 20, True).file_label()
        'unit: files (files hold 10 row groups each; readers skip row groups inside them too)'
        """
        if self.row_groups:
            return f"unit: files ({self.holding()}; readers skip row groups inside them too)"
        return self.label()

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label(), "file_label": self.file_label()}


def count_unit(files: int | None, start: np.ndarray | None, total: int | None,
               row_group_level: bool) -> CountUnit:
    """The unit of ``files`` files whose multi-row-group files own the row groups
    ``start[p]:start[p + 1]`` (:class:`engine.scan.rowgroups.RowGroupMaps`; None: none
    known), ``total`` row groups in all.

    >>> count_unit(3, np.array([0, 4, 4, 12]), 13, True).holding()
    '2 of 3 files hold 4 to 8 row groups, 6 on median, the others one'
    >>> count_unit(3, None, 3, True).label()
    'unit: files (each holds one row group)'
    """
    if start is None or not row_group_level:
        return CountUnit("files", files, files, 0, 0, 0, 0, row_group_level)
    per_file = np.diff(np.asarray(start, dtype=np.int64))
    multi = per_file[per_file > 1]
    if not multi.size:
        return CountUnit("files", files, files, 0, 0, 0, 0, row_group_level)
    return CountUnit("row groups", files, None if total is None else int(total),
                     int(multi.size), int(multi.min()), int(np.median(multi)), int(multi.max()),
                     row_group_level)


def pruning_unit(store: "TableStore", table: str,
                 snapshot: "Snapshot | Callable[[], Snapshot]",
                 row_groups: bool | None = None) -> CountUnit:
    """The unit the scan analysis of ``snapshot`` counts in: at the level ``row_groups``
    asks (default the ``prune_row_groups`` setting, the switch every view, plan and report
    follows: :func:`engine.scan.rowgroups.if_enabled`). At file level the snapshot is not
    read at all (``files`` None): the label needs only the setting, so a page that shows
    stored summaries stays free of a manifest read."""
    level = bool(store.settings.prune_row_groups if row_groups is None else row_groups)
    if not level:
        return count_unit(None, None, None, False)
    snapshot = snapshot() if callable(snapshot) else snapshot
    files = len(snapshot.zonemaps())
    groups = rowgroups.for_snapshot(store, table, snapshot)
    if groups is None:
        return count_unit(files, None, files, level)
    return count_unit(files, groups.start, groups.total, level)
