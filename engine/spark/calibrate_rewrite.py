"""A table's own rewrite price per cell, measured on its own files (``calibrate --rewrite-on``).

WAIR prices reclustering with ``t_r(P)``, "a function of the aggregate size of P" (section
4.2). Plans measure that size in cells: rows x columns x ``rewrite_cell_bytes``
(:func:`engine.policy.costmodel.work_bytes`), a price per cell that ``calibrate`` measures on
its own 6-column numeric table. The work per cell depends on the table (column types,
string widths, encodings): the calibration table's price fits a 6-column numeric table and
is too cheap for a 16-17-column lineitem with strings (bench/executor/README.md). So this
probe rewrites samples of the table's own files with the executor's own
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

The fit is selectable (``fit``, :data:`FITS`). ``"cell"`` is the
above. ``"line"`` (the default, :data:`DEFAULT_FIT`) fits the table's own fixed part AND its
price per cell on its points (:func:`fit_line`), the read/sort rates and ``file_s`` still
held: WAIR's ``t_r(P)`` is "a function of the aggregate size of P" (section 4.2), not
necessarily proportional to it: the executor CPU is linear in rows while the wall time is
not, because the executor sorts a group under ``slicing.MIN_SLICE_ROWS`` rows per slice in
fewer tasks, so one price per cell misprices the small samples and a line fits them
(bench/executor/README.md). A line whose
intercept comes out negative, or whose rise across the sizes is no larger than the spread
of one size's runs (the slope lost in noise), falls back to ``"cell"`` and the reason is
stored (``fit_fallback``). Both fits are stored (``fits``) so a reader can compare them;
the chosen one is the entry's price. What stays global either way: the cold start
(``cold_start_s``: the JVM's first job, not the table's) and the layout terms (per file,
per group, the many-group plan).

The samples: whole files of the table in their order, at 1/4, 1/2 and all of the files that
fit in ``max_rows`` (:func:`sample_sizes`), each rewritten as one sort group into the
table's own file size (as its plans are), after ``warmup`` untimed runs of the smallest
sample; the runs are interleaved across sizes (A B C A B C) and each size keeps its median.
The machine's 1-minute load is read before, after every run and after the probe
(``load_reader``, injectable), and the CPU seconds other processes used during the timed
rounds are counted (:mod:`engine.core.cpu_share`: the machine's busy seconds less this
process tree's, the local Spark JVM included): from half a core on, the probe's times and
price are too high (:func:`engine.policy.pricing.busy_note`). The load alone cannot tell:
it counts the probe's own threads, above the core count on a quiet machine.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import statistics
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from engine.core import cpu_share, logical_types
from engine.core.errors import InvalidParameterError
from engine.policy.costmodel import sized_rewrite_cost
from engine.policy.pricing import DEFAULT_FIT, FITS, busy_note
from engine.spark import calibrate
from engine.spark.session import get_spark
from engine.table.model import ZoneMaps

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from engine.core.config import Settings
    from engine.table.model import Partition, TableSchema

#: the sample sizes, as fractions of the files that fit in ``max_rows``
SIZE_FRACTIONS = (1 / 4, 1 / 2, 1.0)
#: the default largest sample (rows): calibrate's own largest size
DEFAULT_MAX_ROWS = calibrate.DEFAULT_MAX_ROWS
#: untimed runs of the smallest sample before the timed rounds (bench/executor/README.md)
DEFAULT_WARMUP = 3
__all__ = ["DEFAULT_FIT", "DEFAULT_MAX_ROWS", "DEFAULT_WARMUP", "FITS", "choose_fit",
           "fit_cell_price", "fit_line", "measure", "sample_sizes", "sort_key"]


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


def _predictor(settings: "Settings", columns: int) -> Callable[[float, float, dict[str, float]],
                                                                float]:
    """A point's predicted seconds at a fixed part and a price per cell, every other term
    held: the function plans are priced with (one sort group, its measured files out)."""
    def predict(fixed: float, cell: float, p: dict[str, float]) -> float:
        priced = dataclasses.replace(settings, rewrite_fixed_s=fixed, rewrite_cell_bytes=cell)
        return sized_rewrite_cost([(float(p["rows"]), float(p["bytes"]))], columns, priced,
                                  ["sort"], [int(p["files_out"])]).cpu_seconds
    return predict


def fit_line(points: Sequence[dict[str, float]], columns: int, settings: "Settings",
             start: float) -> tuple[float, float, list[float]]:
    """The table's own fixed part and price per cell that fit the points' ``seconds`` best
    in relative terms (read/sort rates and ``file_s`` held), and each point's relative
    error: the prediction is linear in both (fixed: slope 1; the cell price: re-linearised
    around the answer, three steps, as :func:`fit_cell_price`). The result may be
    unusable (a negative fixed part, a non-positive price): :func:`choose_fit` judges.

    Example (10 columns, 1.5 s per MB of work; points measured at 2 s + 4 B per cell):
    >>> from engine.core.config import Settings
    >>> s = Settings(rewrite_fixed_s=1.0, rewrite_read_bytes_per_s=1e6, sort_bytes_per_s=2e6,
    ...              rewrite_cell_bytes=2.0)
    >>> pts = [{"rows": r, "bytes": r * 9, "files_out": 1, "seconds": 2 + r * 10 * 4 * 1.5e-6}
    ...        for r in (10_000, 20_000, 40_000)]
    >>> f, c, err = fit_line(pts, 10, s, 2.0)
    >>> round(f, 6), round(c, 6), [abs(round(e, 9)) for e in err]
    (2.0, 4.0, [0.0, 0.0, 0.0])
    """
    predict = _predictor(settings, columns)
    fixed, cell = float(settings.rewrite_fixed_s), float(start) if start > 0 else 1.0
    t = [float(p["seconds"]) for p in points]
    w = [1.0 / ti ** 2 for ti in t]
    for _ in range(3):
        a = [predict(fixed, cell, p) for p in points]
        sl = [(predict(fixed, 2 * cell, p) - ai) / cell for p, ai in zip(points, a)]
        r = [ti - ai for ti, ai in zip(t, a)]
        # weighted normal equations for (d_fixed, d_cell): sum w (r - df - s dc) (1, s) = 0
        s0, s1, s2 = sum(w), sum(wi * si for wi, si in zip(w, sl)), \
            sum(wi * si * si for wi, si in zip(w, sl))
        b0, b1 = sum(wi * ri for wi, ri in zip(w, r)), \
            sum(wi * si * ri for wi, si, ri in zip(w, sl, r))
        det = s0 * s2 - s1 * s1
        if det <= 1e-12 * s0 * s2:
            raise InvalidParameterError("the rewrite probe: the samples do not separate a "
                                        "fixed part from a price per cell (one size)")
        df, dc = (b0 * s2 - b1 * s1) / det, (s0 * b1 - s1 * b0) / det
        fixed, new = fixed + df, cell + dc
        if new <= 0:
            return fixed, new, [math.nan for _ in points]
        done = abs(new - cell) <= 1e-9 * cell
        cell = new
        if done:
            break
    return fixed, cell, [predict(fixed, cell, p) / float(p["seconds"]) - 1 for p in points]


def _spread(p: dict[str, Any]) -> float:
    """The spread of one size's runs around its median: max - min, the fastest and the
    slowest dropped when there are 4 or more (the median ignores one outlier; so does its
    noise: on a loaded machine one run can take several times the others).

    >>> _spread({"runs_s": [10.76, 3.08, 2.13, 3.05, 2.96]}), _spread({"runs_s": [1.0, 1.4]})
    (0.12, 0.4)
    """
    runs = sorted(float(r) for r in (p.get("runs_s") or [p["seconds"]]))
    if len(runs) >= 4:
        runs = runs[1:-1]
    return round(runs[-1] - runs[0], 9)


def choose_fit(points: Sequence[dict[str, Any]], columns: int, settings: "Settings",
               fit: str = DEFAULT_FIT) -> dict[str, Any]:
    """Both fits of the points and the one the table's plans use: ``fit``, or ``"cell"``
    when ``"line"`` was asked and its fixed part is negative, its price per cell not
    positive, or the rise of the medians across the sizes (largest minus smallest sample)
    is no larger than the widest spread of one size's runs (:func:`_spread`: the slope lost
    in noise).

    Returns ``{"fit", "fit_requested", "fit_fallback" (the reason or None),
    "rewrite_cell_bytes", "rewrite_fixed_s" (the line's, or None), "errors", "fits"}``."""
    if fit not in FITS:
        raise InvalidParameterError(f"--fit: expected one of {', '.join(FITS)}, got {fit!r}")
    cell, cell_err = fit_cell_price(points, columns, settings, settings.rewrite_cell_bytes)
    fits: dict[str, Any] = {"cell": {"rewrite_cell_bytes": round(cell, 6),
                                     "rewrite_fixed_s": float(settings.rewrite_fixed_s),
                                     "errors": [round(e, 4) for e in cell_err]}}
    reason = None
    if fit == "line":
        fixed, lcell, line_err = fit_line(points, columns, settings, cell)
        fits["line"] = {"rewrite_cell_bytes": round(lcell, 6), "rewrite_fixed_s": round(fixed, 4),
                        "errors": [None if math.isnan(e) else round(e, 4) for e in line_err]}
        by_size = sorted(points, key=lambda p: p["rows"])
        rise = float(by_size[-1]["seconds"]) - float(by_size[0]["seconds"])
        noise = max(_spread(p) for p in points)
        if not lcell > 0:
            reason = (f"the line's price per cell came out {lcell:.3f} B (not positive): "
                      "the samples' times do not grow with their size")
        elif fixed < 0:
            reason = (f"the line's fixed part came out {fixed:.2f} s (negative): the "
                      "calibration's fixed cost is kept")
        elif rise <= noise:
            reason = (f"the slope is lost in noise: the samples rise {rise:.2f} s from the "
                      f"smallest to the largest, one size's runs spread {noise:.2f} s")
    used = "line" if fit == "line" and reason is None else "cell"
    return {"fit": used, "fit_requested": fit, "fit_fallback": reason,
            "rewrite_cell_bytes": fits[used]["rewrite_cell_bytes"],
            "rewrite_fixed_s": fits["line"]["rewrite_fixed_s"] if used == "line" else None,
            "errors": fits[used]["errors"], "fits": fits}


def _cpu_reading() -> "cpu_share.CpuReading | None":
    """The machine's and this process tree's CPU seconds now (:mod:`engine.core.cpu_share`):
    read around the timed rounds, the cores other processes took from the probe."""
    return cpu_share.reading()


def _load() -> float | None:
    """The machine's 1-minute load average, stored beside the points: the price per cell
    moves with the load like every timing, so a reader can judge a stored price."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def measure(settings: "Settings", schema: "TableSchema", parts: Sequence["Partition"], *,
            spark: "SparkSession | None" = None, repeat: int = calibrate.DEFAULT_REPEAT,
            max_rows: int = DEFAULT_MAX_ROWS, target_rows: int | None = None,
            target_bytes: int | None = None, key: str | None = None,
            fit: str = DEFAULT_FIT, warmup: int = DEFAULT_WARMUP,
            load_reader: Callable[[], float | None] | None = None, cores: int | None = None,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Rewrite samples of ``parts`` (the table's files, in order) and fit the table's price
    (see the module docstring: ``fit``, ``warmup``); nothing is stored or committed.
    ``target_rows`` / ``target_bytes``: the table's output file size, as its plans write.
    ``load_reader``: the machine's 1-minute load (read before, after each run and at the
    end); ``cores``: the machine's (``os.cpu_count()``), for the busy-machine note."""
    if int(repeat) < 1:
        raise InvalidParameterError(f"--repeat must be >= 1, got {repeat}")
    if int(warmup) < 0:
        raise InvalidParameterError(f"--warmup must be >= 0, got {warmup}")
    if fit not in FITS:
        raise InvalidParameterError(f"--fit: expected one of {', '.join(FITS)}, got {fit!r}")
    if not (settings.rewrite_fixed_s > 0 and settings.rewrite_cell_bytes > 0):
        raise InvalidParameterError(
            "the rewrite probe holds the calibrated fixed cost and layout terms: run "
            "`layout-advisor calibrate` first (no calibrated rewrite_fixed_s / "
            "rewrite_cell_bytes in this workspace)")
    say = progress or (lambda _m: None)
    load_reader = load_reader or _load  # read at call time: a test injects the module's
    cpu_reader = _cpu_reading  # likewise
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
        f"{key}; {int(warmup)} warm-up(s), then {repeat} interleaved rounds")
    runs: list[list[tuple[float, Any]]] = [[] for _ in sizes]
    load_before = load_reader()
    during: list[float] = []
    warm_s: list[float] = []
    try:
        for k in range(int(warmup)):  # untimed: JIT, Python workers
            wall, _ = run(sizes[0], f"warm-up-{k}")
            warm_s.append(round(wall, 4))
            say(f"  warm-up {k + 1}/{int(warmup)} ({sizes[0]} files): {wall:.2f} s")
        cpu_before = cpu_reader()
        for k in range(int(repeat)):
            for i, n in enumerate(sizes):
                runs[i].append(run(n, f"r{k}-{i}"))
                reading = load_reader()
                if reading is not None:
                    during.append(float(reading))
                say(f"  repetition {k + 1}/{repeat}, {n} files: {runs[i][-1][0]:.2f} s")
        others = cpu_share.others_cores(cpu_before, cpu_reader())
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
    chosen = choose_fit(points, columns, settings, fit)
    for p, e in zip(points, chosen["errors"]):
        p["error_at_fit"] = e
    load_after = load_reader()
    readings = [v for v in (*during, load_after) if v is not None]
    out = {"rewrite_cell_bytes": chosen["rewrite_cell_bytes"], "columns": columns, "key": key,
           "repeat": int(repeat), "warmup": int(warmup), "warmup_s": warm_s, "points": points,
           "load": [load_before, load_after],
           "load_max": round(max(readings), 2) if readings else None,
           "cores": int(cores or os.cpu_count() or 1), "others_cores": others,
           "calibration_cell_bytes": float(settings.rewrite_cell_bytes),
           **{k: chosen[k] for k in ("fit", "fit_requested", "fit_fallback", "fits")},
           "held": {k: float(getattr(settings, k)) for k in
                    ("rewrite_fixed_s", "rewrite_read_bytes_per_s", "sort_bytes_per_s",
                     "file_s")}}
    if chosen["rewrite_fixed_s"] is not None:
        out["rewrite_fixed_s"] = chosen["rewrite_fixed_s"]
    out["busy"] = busy_note(out)
    return out
