"""A table's own rewrite price per cell, measured on its own files (``calibrate --rewrite-on``).

WAIR prices reclustering with ``t_r(P)``, "a function of the aggregate size of P" (section
4.2). Plans measure that size in cells: rows x columns x ``rewrite_cell_bytes``
(:func:`engine.policy.costmodel.work_bytes`), a price per cell that ``calibrate`` measures on
its own 6-column numeric table. The work per cell depends on the table (column types,
string widths, encodings): round 9's quiet figures found the calibration table's price
right for the bench's 6-column table (10M sort -4%) and too cheap for a 16-17-column
lineitem with strings (the sample demo's plan -38% warm, the 10M replay's rewrites 40-49%
under). So this probe rewrites samples of the table's own files with the executor's own
rewrite (:func:`engine.spark.calibrate.timed_rewrite`: into a scratch folder, nothing
committed, the scratch removed) and fits the table's own price per cell.

What is fitted and what is held: the aggregate size of P is the one thing the table's
content changes, so only the price per cell is fitted. The fixed cost of a job
(``rewrite_fixed_s``), the read and sort rates, the per-file term (``file_s``) and the
layout terms are the machine's and Spark's, measured by ``calibrate`` over a 16x range of
sizes and layouts; refitting them on one table's few sizes would trade them for noise and
make two tables' plans disagree on what a job costs. With them held, a point's predicted
time is linear in the price per cell (in memory; the external-sort step is handled by
re-linearising, :func:`fit_cell_price`), and the price is the least-squares fit of the
points' relative errors (the goal is a relative error: ±30% of a plan's wall time).

The samples: whole files of the table in their order, at 1/4, 1/2 and all of the files that
fit in ``max_rows`` (:func:`sample_sizes`), each rewritten as one sort group into the
table's own file size (as its plans are), after one untimed warm-up; the runs are
interleaved across sizes (A B C A B C) and each size keeps its median.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import sized_rewrite_cost
from engine.spark import calibrate
from engine.table.model import ZoneMaps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.table.model import Partition, TableSchema

#: the sample sizes, as fractions of the files that fit in ``max_rows``
SIZE_FRACTIONS = (1 / 4, 1 / 2, 1.0)
#: the default largest sample (rows): calibrate's own largest size
DEFAULT_MAX_ROWS = calibrate.DEFAULT_MAX_ROWS
__all__ = ["DEFAULT_MAX_ROWS", "fit_cell_price", "measure", "sample_sizes", "sort_key"]


def sample_sizes(rows: Sequence[int], max_rows: int) -> list[int]:
    """How many of the table's first files each sample takes: 1/4, 1/2 and all of the files
    whose rows fit in ``max_rows`` (at least one file), distinct, at least two sizes.

    Example (44 files of 2,000 rows; 10 files of 1M rows under a 1.6M limit):
    >>> sample_sizes([2000] * 44, 1_600_000), sample_sizes([1_000_000] * 10, 2_500_000)
    ([11, 22, 44], [1, 2])
    """
    total, n = 0, 0
    for r in rows:
        if n and total + int(r) > int(max_rows):
            break
        total, n = total + int(r), n + 1
    sizes = sorted({max(1, round(n * f)) for f in SIZE_FRACTIONS})
    if len(sizes) < 2:
        raise InvalidParameterError(
            f"the rewrite probe needs two sample sizes, and {n} file(s) fit in --max-rows "
            f"{int(max_rows):,}: raise --max-rows (the table must have two or more files)")
    return sizes


def sort_key(schema: "TableSchema") -> str:
    """The column the samples are sorted on: the first date or timestamp column (what
    the policies' plans sort on most: a time column), else the first orderable one.

    Example:
    >>> from engine.table.model import TableSchema
    >>> sort_key(TableSchema((("l_comment", "string"), ("l_shipdate", "date"))))
    'l_shipdate'
    """
    for want in (("date", "timestamp"), logical_types.ORDERABLE_TYPES):
        for name, ltype in schema.columns:
            if ltype in want:
                return name
    raise InvalidParameterError("the table has no orderable column to sort the samples on")


def fit_cell_price(points: Sequence[dict[str, float]], columns: int,
                   settings: "Settings", start: float) -> tuple[float, list[float]]:
    """The price per cell that fits the points' measured ``seconds`` best in relative
    terms, every other term of the model held (``settings``' calibrated ones), and each
    point's relative error at that price.

    A point is predicted as a plan of one sort group of its ``rows`` (``bytes``) writing
    its measured ``files_out`` (:func:`engine.policy.costmodel.sized_rewrite_cost`, the
    function plans are priced with). The prediction is linear in the price in memory;
    above the memory budget the external sort's passes make it piecewise linear, so the
    fit re-linearises around its answer (three steps).

    Example (fixed 1 s, read and sort at 1 and 2 MB/s: 1.5 s per MB of work; 10 columns;
    points measured at 4 B per cell):
    >>> from engine.core.config import Settings
    >>> s = Settings(rewrite_fixed_s=1.0, rewrite_read_bytes_per_s=1e6, sort_bytes_per_s=2e6,
    ...              rewrite_cell_bytes=2.0)
    >>> pts = [{"rows": r, "bytes": r * 9, "files_out": 1, "seconds": 1 + r * 10 * 4 * 1.5e-6}
    ...        for r in (10_000, 40_000)]
    >>> c, err = fit_cell_price(pts, 10, s, 2.0)
    >>> round(c, 6), [abs(round(e, 9)) for e in err]
    (4.0, [0.0, 0.0])
    """
    def predict(cell: float, p: dict[str, float]) -> float:
        priced = dataclasses.replace(settings, rewrite_cell_bytes=cell)
        return sized_rewrite_cost([(float(p["rows"]), float(p["bytes"]))], columns, priced,
                                  ["sort"], [int(p["files_out"])]).cpu_seconds

    cell = float(start) if start > 0 else 1.0
    for _ in range(3):
        a = [predict(cell, p) for p in points]
        s = [(predict(2 * cell, p) - ai) / cell for p, ai in zip(points, a)]
        t = [float(p["seconds"]) for p in points]
        den = sum((si / ti) ** 2 for si, ti in zip(s, t))
        if den <= 0:
            raise InvalidParameterError("the rewrite probe: the calibration prices no work "
                                        "per cell (run `layout-advisor calibrate` first)")
        step = sum(si * (ti - ai) / ti ** 2 for si, ti, ai in zip(s, t, a)) / den
        new = cell + step
        if new <= 0:
            raise InvalidParameterError(
                "the rewrite probe: the table's samples took no longer than the calibrated "
                "fixed cost and per-file terms alone; its price per cell is not separable "
                "(raise --max-rows, or calibrate again)")
        if abs(new - cell) <= 1e-9 * cell:
            cell = new
            break
        cell = new
    return cell, [predict(cell, p) / float(p["seconds"]) - 1 for p in points]


def _load() -> float | None:
    """The machine's 1-minute load average, stored beside the points: the price per cell
    moves with the load like every timing (round 10: 12.3 against 6.5 B per cell on the same
    demo table, a core taken by another process), so a reader can judge a stored price."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def measure(settings: "Settings", schema: "TableSchema", parts: Sequence["Partition"], *,
            spark: "SparkSession | None" = None, repeat: int = calibrate.DEFAULT_REPEAT,
            max_rows: int = DEFAULT_MAX_ROWS, target_rows: int | None = None,
            target_bytes: int | None = None, key: str | None = None,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Rewrite samples of ``parts`` (the table's files, in order) and fit the table's price
    per cell (see the module docstring); nothing is stored or committed. ``target_rows`` /
    ``target_bytes``: the table's output file size, as its plans write."""
    from engine.spark.session import get_spark

    if int(repeat) < 1:
        raise InvalidParameterError(f"--repeat must be >= 1, got {repeat}")
    if not (settings.rewrite_fixed_s > 0 and settings.rewrite_cell_bytes > 0):
        raise InvalidParameterError(
            "the rewrite probe holds the calibrated fixed cost and layout terms: run "
            "`layout-advisor calibrate` first (no calibrated rewrite_fixed_s / "
            "rewrite_cell_bytes in this workspace)")
    say = progress or (lambda _m: None)
    parts = list(parts)
    sizes = sample_sizes([p.rows for p in parts], int(max_rows))
    key = key or sort_key(schema)
    columns = len(ZoneMaps.from_partitions(schema, parts[:1]).columns)
    spark = spark or get_spark(settings)
    work = Path(settings.home) / "calibration" / f"rewrite-{uuid.uuid4().hex[:8]}"
    per_file = int(target_rows) if target_rows else None

    def run(n: int, tag: str) -> tuple[float, Any]:
        return calibrate.timed_rewrite(spark, schema, parts[:n], str(work / tag), "sort",
                                       (key,), per_file, target_bytes)

    say(f"rewrite probe: {len(sizes)} samples of {', '.join(str(n) for n in sizes)} files "
        f"({', '.join(f'{sum(p.rows for p in parts[:n]):,}' for n in sizes)} rows), sorted on "
        f"{key}; a warm-up, then {repeat} interleaved rounds")
    runs: list[list[tuple[float, Any]]] = [[] for _ in sizes]
    load_before = _load()
    try:
        wall, _ = run(sizes[0], "warm-up")  # untimed: JIT, Python workers
        say(f"  warm-up ({sizes[0]} files): {wall:.2f} s")
        for k in range(int(repeat)):
            for i, n in enumerate(sizes):
                runs[i].append(run(n, f"r{k}-{i}"))
                say(f"  round {k + 1}/{repeat}, {n} files: {runs[i][-1][0]:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    points = []
    for n, rs in zip(sizes, runs):
        rows = sum(p.rows for p in parts[:n])
        points.append({
            "files_in": n, "rows": rows, "bytes": sum(p.bytes for p in parts[:n]),
            "cells": rows * columns, "files_out": sum(g.outputs for g in rs[0][1].groups),
            "seconds": round(statistics.median(w for w, _ in rs), 4),
            "cpu_s": round(statistics.median(r.measured["executor_cpu_seconds"]
                                             for _, r in rs), 4),
            "runs_s": [round(w, 4) for w, _ in rs],
            "phases": {name: round(statistics.median(r.phases.get(name, 0.0) for _, r in rs), 4)
                       for name in rs[0][1].phases}})
    cell, errors = fit_cell_price(points, columns, settings, settings.rewrite_cell_bytes)
    for p, e in zip(points, errors):
        p["error_at_fit"] = round(e, 4)
    return {"rewrite_cell_bytes": round(cell, 6), "columns": columns, "key": key,
            "repeat": int(repeat), "points": points, "load": [load_before, _load()],
            "calibration_cell_bytes": float(settings.rewrite_cell_bytes),
            "held": {k: float(getattr(settings, k)) for k in
                     ("rewrite_fixed_s", "rewrite_read_bytes_per_s", "sort_bytes_per_s",
                      "file_s")}}
