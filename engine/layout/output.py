"""What a rewrite writes for one plan group: the output model every layer prices and the
executor writes.

A plan's promise depends on the granularity of its output: WAIR's saving (seed 000,
eq. 3) assumes that the rows a query needs end up packed into as few partitions as their
share of the group, which holds only if the group is written as several files (or several
row groups) of about the input's size. A group sorted into one file saves nothing at file
level. So the planner (:mod:`engine.policy.impact`, :mod:`engine.policy.costmodel`), the
simulator, the what-if and PTO's labels price the shape this module computes, and the
executor (:mod:`engine.spark.rewrite`) writes exactly that shape.

Rules, in order (the first that applies wins, and :attr:`OutputShape.file_rule` names it):

* file size: the plan group's ``target_file_rows`` or ``target_file_bytes`` parameter; the
  table's own target (Iceberg ``write.target-file-size-bytes``, Delta
  ``delta.targetFileSize``, a native table's target rows or bytes: :class:`WriteTarget`);
  else the **input's granularity**: the median rows per input file of the group. Never
  one file per group unless the group's inputs are one file.
* row-group size, in rows (Parquet's ``parquet.block.size`` counts uncompressed bytes in
  memory, so a byte size is turned into rows here, at the inputs' compressed row width,
  and the writer limits row groups by count): the group's ``row_group_rows`` or
  ``row_group_bytes`` parameter (PTO); PAW's ``n_mbr`` row groups per file; the table's
  own row-group target (Iceberg ``write.parquet.row-group-limit`` /
  ``write.parquet.row-group-size-bytes``); else the inputs' median rows per row group when
  known; else one row group per file.

Byte sizes become rows at the group's mean compressed row width (``bytes / rows``), the
width its rows have in the input files.

Example (48 input files of 4,000 rows, 1.6 MB each, a table that sets no target):
>>> s = output_shape([4000] * 48, 48 * 1_600_000, WriteTarget())
>>> s.files, s.rows_per_file, s.row_groups_per_file, s.file_rule
(48, 4000, 1, 'input granularity: the median input file holds 4,000 rows')
>>> t = output_shape([4000] * 48, 48 * 1_600_000, WriteTarget(file_bytes=512 * 2**20,
...                  source="Iceberg write.target-file-size-bytes"))
>>> t.files, t.file_rule
(1, 'table target: Iceberg write.target-file-size-bytes = 536,870,912 bytes')
>>> u = output_shape([100_000] * 4, 4_000_000, WriteTarget(), {"row_group_bytes": 250_000})
>>> u.files, u.row_group_rows, u.row_groups_per_file
(4, 25000, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from engine.table.info import WriteTarget

__all__ = ["OutputShape", "WriteTarget", "output_shape", "rows_for_bytes", "str_row_groups"]


@dataclass(frozen=True)
class OutputShape:
    """The files one group is written into: ``files`` files of ``rows_per_file`` rows (the
    last may hold fewer), each cut into row groups of ``row_group_rows`` rows (the last of
    a file may hold fewer). ``file_rule`` and ``row_group_rule`` say which rule chose
    them, in words a preview can show."""

    rows: int
    rows_per_file: int
    row_group_rows: int
    file_rule: str
    row_group_rule: str

    @property
    def files(self) -> int:
        return max(1, math.ceil(self.rows / self.rows_per_file)) if self.rows > 0 else 1

    @property
    def row_groups_per_file(self) -> int:
        return max(1, math.ceil(min(self.rows_per_file, max(self.rows, 1)) / self.row_group_rows))

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "rows_per_file": self.rows_per_file,
                "row_group_rows": self.row_group_rows,
                "row_groups_per_file": self.row_groups_per_file,
                "file_rule": self.file_rule, "row_group_rule": self.row_group_rule}


def rows_for_bytes(nbytes: float, rows: int, total_bytes: float) -> int:
    """``nbytes`` turned into rows at the mean width of ``rows`` rows taking ``total_bytes``
    bytes (at least 1).

    >>> rows_for_bytes(1_000, 100, 10_000)
    10
    """
    width = float(total_bytes) / rows if rows > 0 and total_bytes > 0 else 1.0
    return max(1, int(round(float(nbytes) / width)))


def _positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value > 0 else None


def _first(rows: int, nbytes: int, candidates: Sequence[tuple[str, Any, str]]) -> tuple[int, str] | None:
    """The first set candidate ``(label, value, "rows" | "bytes")``, in rows, with its rule."""
    for label, value, unit in candidates:
        v = _positive(value)
        if v and unit == "rows":
            return int(v), f"{label} = {int(v):,} rows"
        if v:
            return rows_for_bytes(v, rows, nbytes), f"{label} = {int(v):,} bytes"
    return None


def _file_rows(rows: int, nbytes: int, input_file_rows: np.ndarray, target: WriteTarget,
               params: Mapping[str, Any]) -> tuple[int, str]:
    source = f"table target: {target.source}" if target.source else "table target"
    chosen = _first(rows, nbytes, [
        ("plan parameter target_file_rows", params.get("target_file_rows"), "rows"),
        ("plan parameter target_file_bytes", params.get("target_file_bytes"), "bytes"),
        (source, target.file_rows, "rows"), (source, target.file_bytes, "bytes")])
    if chosen:
        return chosen
    sizes = input_file_rows[input_file_rows > 0]
    median = max(1, int(round(float(np.median(sizes)))) if sizes.size else max(rows, 1))
    return median, f"input granularity: the median input file holds {median:,} rows"


def str_row_groups(layout: str, params: Mapping[str, Any] | None) -> int | None:
    """PAW's ``n_mbr`` STR row groups per file (seed 001 §V-A), which the executor cuts
    after the write (:mod:`engine.spark.str_rowgroups`); None for any other group.

    >>> str_row_groups("paw", {"n_mbr": 4}), str_row_groups("sort", {"n_mbr": 4})
    (4, None)
    """
    n_mbr = (params or {}).get("n_mbr") if layout == "paw" else None
    return n_mbr if isinstance(n_mbr, int) and not isinstance(n_mbr, bool) and n_mbr > 0 else None


def _row_group_rows(rows: int, nbytes: int, per_file: int, target: WriteTarget,
                    params: Mapping[str, Any], layout: str,
                    input_row_group_rows: int | None) -> tuple[int, str]:
    n_mbr = str_row_groups(layout, params)
    if n_mbr:
        return max(1, math.ceil(per_file / n_mbr)), f"PAW n_mbr = {n_mbr} row groups per file"
    source = f"table target: {target.source}" if target.source else "table target"
    chosen = _first(rows, nbytes, [
        ("plan parameter row_group_rows", params.get("row_group_rows"), "rows"),
        ("plan parameter row_group_bytes", params.get("row_group_bytes"), "bytes"),
        (source, target.row_group_rows, "rows"), (source, target.row_group_bytes, "bytes")])
    if chosen:
        return chosen
    if input_row_group_rows and 0 < input_row_group_rows < per_file:
        return int(input_row_group_rows), (f"input granularity: the median input row group holds "
                                           f"{int(input_row_group_rows):,} rows")
    return per_file, "one row group per file"


def output_shape(input_file_rows: Sequence[int] | np.ndarray, nbytes: int, target: WriteTarget,
                 params: Mapping[str, Any] | None = None, layout: str = "sort",
                 input_row_group_rows: int | None = None) -> OutputShape:
    """The shape one group is written in (module docstring's rules).

    ``input_file_rows``: the rows of each input file of the group; ``nbytes``: their
    compressed bytes in all; ``params``: the group's ``layout_params``;
    ``input_row_group_rows``: the inputs' median rows per row group, when known.
    """
    file_rows = np.asarray(input_file_rows, dtype=np.int64)
    rows = int(file_rows.sum())
    params = params or {}
    per_file, file_rule = _file_rows(rows, int(nbytes), file_rows, target, params)
    per_group, group_rule = _row_group_rows(rows, int(nbytes), per_file, target, params, layout,
                                            input_row_group_rows)
    return OutputShape(rows=rows, rows_per_file=per_file, row_group_rows=min(per_group, per_file),
                       file_rule=file_rule, row_group_rule=group_rule)
