"""Can the output the executor will write deliver a proposal's saving?

A policy scores its candidates with its own model (WAIR's equation 3 assumes the rows a
query needs end up in as few partitions as their share of the group). Before a plan is
proposed, the groups are priced once more at the shape the executor will actually write
(:func:`engine.layout.output.output_shape`: the table's target file and row-group sizes,
else the inputs' granularity): the window's queries are scored on the rewritten
partitions before and on their predicted replacements (:mod:`engine.policy.impact`). A
plan whose output saves no bytes at all is not proposed, and the reason says why in plain
words (e.g. the table's target file size merges the group into one file).

Only the rewritten partitions can change, so only they are scored: O(group partitions x
window queries) through the sparse scan analysis, never the whole table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.core.fmt import human_bytes
from engine.layout.output import OutputShape, WriteTarget, output_shape
from engine.policy.impact import input_row_group_rows, predicted_with_row_groups, predicted_zonemaps
from engine.scan.pruning import analyze_workload
from engine.scan.rowgroups import RowGroupMaps

if TYPE_CHECKING:
    from engine.policy.base import PlanGroup
    from engine.table.model import ZoneMaps
    from engine.workload.model import ScanFragment

__all__ = ["OutputCheck", "UNMODELLED", "check_output", "group_shapes"]

#: layout parameters whose effect the file-level zonemap prediction does not see
UNMODELLED = frozenset({"partition_by", "n_mbr", "row_group_bytes", "row_group_rows"})


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

    @property
    def delivers(self) -> bool:
        return self.bytes_after < self.bytes_before

    def to_json(self) -> dict[str, Any]:
        return {"bytes_before": self.bytes_before, "bytes_after": self.bytes_after,
                "delivers": self.delivers, "modelled": self.modelled, "reason": self.reason,
                "groups": [s.to_json() for s in self.shapes]}


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
                 target: WriteTarget, row_groups: RowGroupMaps | None = None) -> OutputCheck:
    """Score the window on the groups' partitions before and at the output's shape after
    (row groups included when ``row_groups`` is given, as the scan analysis charges)."""
    shapes = tuple(group_shapes(zm, groups, target, row_groups))
    position = {str(p): i for i, p in enumerate(zm.paths)}
    touched = np.array(sorted({position[p] for g in groups for p in g.partitions if p in position}),
                       dtype=np.int64)
    modelled = not any(set(g.layout_params or {}) & UNMODELLED for g in groups)
    frags = [f for f in window if f.predicated_columns]
    if touched.size == 0 or not frags:
        return OutputCheck(shapes, 0.0, 0.0, "no query of the window filters the rewritten "
                           "partitions", modelled=False)
    old = zm.subset(touched)
    old_rg = RowGroupMaps.of(old, row_groups.zonemaps) if row_groups is not None else None
    if old_rg is not None:
        new, new_rg = predicted_with_row_groups(old, groups, old_rg, target)
    else:
        new, new_rg = predicted_zonemaps(old, groups, target), None
    before = float(sum(s.bytes_scanned for s in analyze_workload(old, frags, old_rg)))
    after = float(sum(s.bytes_scanned for s in analyze_workload(new, frags, new_rg)))
    return OutputCheck(shapes, before, after, _reason(shapes, groups, zm, position, before, after),
                       modelled)


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
        within = (f"; row groups of {s.row_group_rows:,} rows would let engines skip inside them"
                  if s.row_groups_per_file > 1 else
                  "; sorting rows inside a file saves nothing at file level")
        return (f"the output cannot deliver the saving: {s.file_rule} writes {n_in} files as "
                f"{s.files}{within} (the window would read {human_bytes(after)} instead of "
                f"{human_bytes(before)})")
    return (f"the output cannot deliver the saving: at the written shape the window would read "
            f"{human_bytes(after)} from the rewritten files instead of {human_bytes(before)}")
