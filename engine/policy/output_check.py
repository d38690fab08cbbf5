"""Can the output the executor will write deliver a proposal's saving?

A policy scores its candidates with its own model (WAIR's equation 3 assumes the rows a
query needs end up in as few partitions as their share of the group). Before a plan is
proposed, the groups are priced once more at the shape the executor will actually write
(:func:`engine.layout.output.output_shape`: the table's target file and row-group sizes,
else the inputs' granularity): the window's queries are scored on the rewritten
partitions before and on their predicted replacements (:mod:`engine.policy.impact`). A
plan whose output saves no bytes at all is not proposed, and the reason says why in plain
words (e.g. the table's target file size merges the group into one file).

Only the rewritten partitions can change, so only they are scored, never the whole table:
by :func:`engine.policy.impact.score_rewrite` (bytes only; a sweep over sorted range ends
for one-range queries), once per rewrite: WAIR's predicted losses have already scored the
same window on the same groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core.fmt import human_bytes
from engine.layout.output import OutputShape, WriteTarget, output_shape
from engine.policy.impact import input_row_group_rows, score_rewrite
from engine.scan.rowgroups import RowGroupMaps
from engine.scan.window_bytes import window_bytes

if TYPE_CHECKING:
    from engine.policy.base import PlanGroup
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

__all__ = ["OutputCheck", "UNMODELLED", "UNMODELLED_LAYOUTS", "check_output", "group_shapes", "keeps_files_text"]

#: layout parameters whose effect the zonemap prediction does not see: a design with them
#: (PAW's STR row groups, partition directories) is stored even when the check finds its
#: output reads more, and the preview says so. A row-group size (PTO's ``row_group_bytes``,
#: ``row_group_rows``) is modelled: :func:`engine.layout.output.output_shape` turns it into
#: the rows per row group the executor writes and the check charges those row groups
#: (``row_group_level``), so a design whose output reads more is declined like any other
UNMODELLED = frozenset({"partition_by", "n_mbr"})

#: layouts the prediction cannot place: ``binpack`` keeps the input order, which the
#: prediction (a group's rows reordered along its key columns) does not model
UNMODELLED_LAYOUTS = frozenset({"binpack"})


@dataclass(frozen=True)
class OutputCheck:
    """The window's bytes read from the rewritten partitions before and after (at the
    output's shape), each group's shape, and whether the output saves anything."""

    shapes: tuple[OutputShape, ...]
    bytes_before: float
    bytes_after: float
    reason: str

    #: whether the prediction models every group's layout: a physical partition column,
    #: PAW's STR row groups or a row-group size act inside what the zonemap prediction
    #: sees at file level, so a design using them is shown its shapes but never declined here
    modelled: bool = True

    #: what the output does to the files, in plain words, when it keeps every file (same
    #: count, same rows per file) in several row groups (:func:`keeps_files_text`); "" otherwise
    files_note: str = ""

    @property
    def delivers(self) -> bool:
        return self.bytes_after < self.bytes_before

    def to_json(self) -> dict[str, Any]:
        return {"bytes_before": self.bytes_before, "bytes_after": self.bytes_after,
                "delivers": self.delivers, "modelled": self.modelled, "reason": self.reason,
                "files_note": self.files_note, "groups": [s.to_json() for s in self.shapes]}


def group_shapes(zm: "ZoneMaps", groups: Sequence["PlanGroup"], target: WriteTarget,
                 row_groups: RowGroupMaps | None = None) -> list[OutputShape]:
    """Each group's output shape, from its partitions' rows and bytes in ``zm``."""
    position = {str(p): i for i, p in enumerate(zm.paths)}
    out = []
    for g in groups:
        idx = np.array([position[p] for p in g.partitions if p in position], dtype=np.int64)
        out.append(output_shape(zm.rows[idx], int(zm.bytes[idx].sum()), target, g.layout_params,
                                g.layout, input_row_group_rows(zm, idx, row_groups)))
    return out


def check_output(zm: "ZoneMaps", groups: Sequence["PlanGroup"], window: Sequence["ScanFragment"],
                 target: WriteTarget, row_groups: RowGroupMaps | None = None,
                 row_group_level: bool = False) -> OutputCheck:
    """Score the window on the groups' partitions before and at the output's shape after
    (row groups included when ``row_groups`` is given, as the scan analysis charges).

    ``row_group_level``: the scan analysis charges row groups (``settings.prune_row_groups``),
    so an output of several row groups per file is charged its row groups even when every
    input file holds one (``row_groups`` None): the after-run re-estimate reads the written
    files' footers and charges them so."""
    shapes = tuple(group_shapes(zm, groups, target, row_groups))
    position = {str(p): i for i, p in enumerate(zm.paths)}
    modelled = not any(set(g.layout_params or {}) & UNMODELLED or g.layout in UNMODELLED_LAYOUTS
                       for g in groups)
    level = (True if row_group_level and row_groups is None
             and any(s.row_groups_per_file > 1 for s in shapes) else None)
    # the scores the policy's predicted losses read when it priced this same rewrite
    # (engine.policy.impact.score_rewrite remembers the last one)
    score = score_rewrite(zm, groups, window, target, row_groups, level=level)
    if score is None:
        return OutputCheck(shapes, 0.0, 0.0, "no query of the window filters the rewritten "
                           "partitions", modelled=False)
    before = float(sum(score.before.tolist()))
    after = float(sum(score.after.tolist()))
    note = ""
    if after < before and score.new_row_groups is not None and _keeps_files(zm, groups, shapes, position):
        file_before = float(sum(window_bytes(score.old, score.fragments).tolist()))
        file_after = float(sum(window_bytes(score.new, score.fragments).tolist()))
        note = keeps_files_text(zm.rows[score.touched], shapes, file_after < file_before,
                                all(s.files == 1 for s in shapes))
    return OutputCheck(shapes, before, after, _reason(shapes, groups, zm, position, before, after),
                       modelled, note)


def _keeps_files(zm: "ZoneMaps", groups: Sequence["PlanGroup"], shapes: Sequence[OutputShape],
                 position: dict[str, int]) -> bool:
    """Whether every group is written as many files as it reads, each of the rows its input
    had (as multisets: the output's files are full but the last), in several row groups."""
    for g, s in zip(groups, shapes):
        rows = sorted(int(zm.rows[position[p]]) for p in g.partitions if p in position)
        if not rows or s.files != len(rows) or s.row_groups_per_file < 2:
            return False
        written = [s.rows_per_file] * (s.files - 1) + [s.rows - s.rows_per_file * (s.files - 1)]
        if sorted(written) != rows:
            return False
    return True


def keeps_files_text(file_rows: Sequence[int] | np.ndarray, shapes: Sequence[OutputShape],
                     saves_whole_files: bool, file_per_group: bool = False) -> str:
    """The preview's words for an output that keeps every file, its rows and its row-group
    size (a table of large files, where engines skip row groups inside files).
    ``file_rows``: the rows of each rewritten file; ``saves_whole_files``: whether the
    window reads less file by file (without row groups); ``file_per_group``: every group
    is one file, so no row leaves its file.

    * every group one file: a within-file reordering;
    * rows move between the files of a group, but file by file the window reads as much
      as before: the saving comes only from row groups;
    * else: queries skip whole files and row groups inside the files they read.

    >>> s = OutputShape(rows=1_000_000, rows_per_file=1_000_000, row_group_rows=100_000,
    ...                 file_rule="", row_group_rule="")
    >>> keeps_files_text([1_000_000] * 4, [s] * 4, False, file_per_group=True)
    'a within-file reordering: each of the 4 files keeps its 1,000,000 rows; the saving comes from row groups of 100,000 rows (file by file, the window would read as much as before)'
    >>> keeps_files_text([1_000_000] * 4, [s], False)
    'the files keep their size (4 files of 1,000,000 rows) and the saving comes only from row groups of 100,000 rows: file by file, the window would read as much as before; the rows are re-sorted across the files of each group'
    >>> keeps_files_text([1_000_000, 1_215], [s], True)[:58]
    'the files keep their size: 2 files of up to 1,000,000 rows'
    >>> keeps_files_text([1_000_000] * 4, [s], True)
    'the files keep their size: 4 files of 1,000,000 rows, in row groups of 100,000 rows; the rows are re-sorted across the files of each group, so queries skip whole files and row groups inside the files they read'
    """
    sizes = {int(r) for r in file_rows}
    n = len(file_rows)
    one = len(sizes) == 1
    each = f"{max(sizes):,} rows" if one else f"rows (up to {max(sizes):,})"
    groups = {s.row_group_rows for s in shapes}
    rg = (f"row groups of {groups.pop():,} rows" if len(groups) == 1
          else f"row groups of up to {max(groups):,} rows")
    same = "" if saves_whole_files else " (file by file, the window would read as much as before)"
    if file_per_group:
        return (f"a within-file reordering: each of the {n:,} files keeps its {each}; the saving "
                f"comes from {rg}{same}")
    files = f"{n:,} files of {'' if one else 'up to '}{max(sizes):,} rows"
    if not saves_whole_files:
        return (f"the files keep their size ({files}) and the saving comes only from {rg}: "
                "file by file, the window would read as much as before; the rows are "
                "re-sorted across the files of each group")
    return (f"the files keep their size: {files}, in {rg}; the rows are re-sorted across the "
            "files of each group, so queries skip whole files and row groups inside the files "
            "they read")


def _reason(shapes: Sequence[OutputShape], groups: Sequence["PlanGroup"], zm: "ZoneMaps",
            position: dict[str, int], before: float, after: float) -> str:
    """Why the output saves what it saves, in a DBA's words."""
    if after < before:
        return (f"at the written shape the window reads {human_bytes(before - after)} less "
                f"from the rewritten files ({human_bytes(before)} -> {human_bytes(after)})")
    merged = [(len([p for p in g.partitions if p in position]), s) for g, s in zip(groups, shapes)
              if s.files < len([p for p in g.partitions if p in position])]
    if merged:
        n_in, s = max(merged, key=lambda t: t[0] - t[1].files)
        within = (f", in row groups of {s.row_group_rows:,} rows" if s.row_groups_per_file > 1
                  else "; sorting rows inside a file saves nothing at file level")
        return (f"the output cannot deliver the saving: {s.file_rule} writes {n_in} files as "
                f"{s.files}{within} (the window would read {human_bytes(after)} instead of "
                f"{human_bytes(before)})")
    return (f"the output cannot deliver the saving: at the written shape the window would read "
            f"{human_bytes(after)} from the rewritten files instead of {human_bytes(before)}")
