"""The rates and layout terms of the cost model, fitted from calibration's measured points.

Pure numpy, no Spark: :mod:`engine.spark.calibrate` measures the points (seconds of the
executor's rewrites and of DuckDB scans at a few sizes) and these functions turn them into
the rates of WAIR section 4.2's ``t_r(P)`` (a fixed cost plus read and sort-and-write rates,
:func:`rates_from_points`), the layout terms of :class:`engine.policy.costmodel.RewriteTerms`
(:func:`terms_from_points`) and the cold-start term (:func:`cold_start`). Lines are least
squares with the intercept clamped at 0 (:func:`fit_line`); several non-negative terms are
fitted together by :func:`nonnegative_fit`.
"""

from __future__ import annotations

import statistics
from typing import Sequence

import numpy as np

from engine.core.errors import InvalidParameterError

__all__ = ["cold_start", "fit_line", "nonnegative_fit", "overhead_line", "rates_from_points",
           "terms_from_points"]


def fit_line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares ``y = a + b x``; (a, b), the intercept clamped at 0.

    Example:
    >>> a, b = fit_line([1, 2, 3], [3, 5, 7])
    >>> round(a, 6), round(b, 6)
    (1.0, 2.0)
    """
    if len(x) < 2:
        raise InvalidParameterError("calibration needs at least two sizes")
    a_mat = np.vstack([np.ones(len(x)), np.asarray(x, dtype=float)]).T
    (a, b), *_ = np.linalg.lstsq(a_mat, np.asarray(y, dtype=float), rcond=None)
    return round(max(0.0, float(a)), 6), float(b)


def terms_from_points(points: Sequence[dict[str, float]],
                      demo: dict[str, float] | None = None) -> dict[str, float]:
    """The layout terms from the points that carry a many-files run (``files_s``,
    ``files_n`` against ``rewrite_s``, ``files``) and a Hilbert run (``fitted_s``), and the
    demo-shaped probe ``demo`` (its one-group ``sort_s`` and many-group ``groups_s``).

    ``file_s`` is the mean extra seconds per extra file (clamped at 0). The Hilbert
    overheads are a line over bytes; a slope lost in noise (<= 0) leaves the key rate at 0
    and the mean overhead as the fixed cost.

    Example:
    >>> pts = [{"bytes": 1e6, "rewrite_s": 3.0, "files": 1, "files_s": 4.9, "files_n": 20,
    ...         "fitted_s": 4.5}, {"bytes": 9e6, "rewrite_s": 7.0, "files": 9, "fitted_s": 12.5}]
    >>> t = terms_from_points(pts)
    >>> round(t["file_s"], 3), round(t["fitted_job_s"], 3), round(t["fitted_key_bytes_per_s"])
    (0.1, 1.0, 2000000)
    """
    extra = [(p["files_s"] - p["rewrite_s"]) / (p["files_n"] - p["files"])
             for p in points if "files_s" in p and p["files_n"] > p["files"]]
    file_s = max(0.0, statistics.fmean(extra)) if extra else 0.0
    fitted = [(p["bytes"], p["fitted_s"] - p["rewrite_s"]) for p in points if "fitted_s" in p]
    job, key_rate = overhead_line(fitted)
    # the many-group runs minus the sort run of the same rows (corrected for any difference
    # in files): once ``multi_group_s`` + (G - 1) extra groups x ``group_s`` + the plan's
    # bytes at the extra rate of a write partitioned by group
    grouped = [(1.0, p[f"{k}_n"] - 1, p["bytes"],
                p[f"{k}_s"] - p["rewrite_s"]
                - file_s * (p.get(f"{k}_files", p["files"]) - p["files"]), p[f"{k}_s"])
               for p in points for k in ("groups", "groups2")
               if f"{k}_s" in p and p[f"{k}_n"] > 1]
    if demo and demo.get("groups_n", 0) > 1:
        # in the plans' unit: cells x the calibration table's bytes per cell (the demo's
        # small files hold more compressed bytes per cell than the large runs' files)
        cell = (sum(p["bytes"] for p in points) / sum(p["cells"] for p in points)
                if points and all(p.get("cells") for p in points) else 0.0)
        size = demo["cells"] * cell if cell else demo["bytes"]
        grouped.append((1.0, demo["groups_n"] - 1, size,
                        demo["groups_s"] - demo["sort_s"]
                        - file_s * (demo["groups_files"] - demo["sort_files"]),
                        demo["groups_s"]))
    # weighted by 1 / the plan's seconds: the fit minimises errors relative to each plan's
    # time, so a 2 s demo plan counts as much as a 7 s large one
    once, group_s, multi_per_byte = nonnegative_fit(
        [tuple(v / max(r[-1], 1e-9) for v in r[:-1]) for r in grouped])
    return {"fitted_job_s": round(job, 6), "fitted_key_bytes_per_s": key_rate,
            "file_s": round(file_s, 6), "multi_group_s": round(once, 6),
            "group_s": round(group_s, 6),
            "multi_group_bytes_per_s": 1.0 / multi_per_byte if multi_per_byte > 1e-12 else 0.0}


def nonnegative_fit(rows: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """Least squares ``d = sum_j c_j x_j`` (no intercept) over rows (x_1 .. x_k, d), every
    ``c_j >= 0``: the best fit over the subsets of terms whose own fit is non-negative (an
    exact NNLS for the few terms calibration has; a term noise would make negative is 0).

    Example (d = 0.5 + 0.1 (G - 1) + 2e-6 B, exactly; then one group count and an
    overhead that shrinks with B: neither a per-group nor a per-byte part is separable):
    >>> rows = [(1, 7, 1e6, 3.2), (1, 7, 4e6, 9.2), (1, 31, 4e6, 11.6)]
    >>> [round(c, 6) for c in nonnegative_fit(rows)]
    [0.5, 0.1, 2e-06]
    >>> [round(c, 6) for c in nonnegative_fit([(1, 7, 1e6, 1.4), (1, 7, 4e6, 0.7)])]
    [1.05, 0.0, 0.0]
    """
    if not rows:
        return (0.0, 0.0, 0.0)
    x = np.array([r[:-1] for r in rows], dtype=float)
    d = np.array([r[-1] for r in rows], dtype=float)
    k = x.shape[1]
    best, best_err = np.zeros(k), float(d @ d)
    for mask in range(1, 2 ** k):
        cols = [j for j in range(k) if mask >> j & 1]
        if len(cols) > len(rows) or np.linalg.matrix_rank(x[:, cols]) < len(cols):
            continue
        c, *_ = np.linalg.lstsq(x[:, cols], d, rcond=None)
        if np.any(c < 0):
            continue
        err = float(np.sum((d - x[:, cols] @ c) ** 2))
        if err < best_err - 1e-12:
            best, best_err = np.zeros(k), err
            best[cols] = c
    return tuple(float(v) for v in best)


def overhead_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(seconds, bytes per second) of an overhead measured at a few sizes: a line over
    bytes; a slope lost in noise (<= 0) leaves the rate at 0 and the mean overhead as the
    fixed part; one size gives its overhead and no rate.

    Example:
    >>> [round(v, 6) for v in overhead_line([(1e6, 1.5), (9e6, 5.5)])]
    [1.0, 2000000.0]
    >>> [round(v, 6) for v in overhead_line([(1e6, 1.4), (9e6, 1.2)])]
    [1.3, 0.0]
    """
    if len(points) >= 2:
        fixed, per_byte = fit_line([b for b, _ in points], [d for _, d in points])
        if per_byte > 1e-12:
            return fixed, 1.0 / per_byte
        return max(0.0, statistics.fmean(d for _, d in points)), 0.0
    if points:
        return max(0.0, points[0][1]), 0.0
    return 0.0, 0.0


def rates_from_points(points: Sequence[dict[str, float]],
                      file_s: float = 0.0) -> dict[str, float]:
    """The model's rates from measured (bytes, rewrite s, read s, query s) points; with
    ``file_s``, each rewrite point is first corrected by ``file_s`` per output file
    (``files``) so the per-file term is not counted again in the byte rates.

    Example:
    >>> pts = [{"bytes": b, "rewrite_s": 2 + b / 1e6 + b / 5e5, "read_s": 0.5 + b / 1e6,
    ...         "query_s": 0.01 + b / 1e8} for b in (1e6, 4e6, 9e6)]
    >>> r = rates_from_points(pts)
    >>> round(r["rewrite_fixed_s"], 3), round(r["rewrite_read_bytes_per_s"]), round(r["sort_bytes_per_s"])
    (2.0, 1000000, 500000)
    >>> round(r["query_fixed_s"], 3), round(r["query_scan_bytes_per_s"])
    (0.01, 100000000)
    """
    b = [p["bytes"] for p in points]
    fixed, per_byte = fit_line(b, [p["rewrite_s"] - file_s * p.get("files", 0)
                                   for p in points])
    _, read_per_byte = fit_line(b, [p["read_s"] for p in points])
    if not 0 < read_per_byte < per_byte:
        # the read pass does not grow with size above the noise: its slope is not
        # separable; the whole slope goes to sort-and-write and the read rate stays
        # uncalibrated (0: ``scan_bytes_per_s`` applies)
        read_per_byte = 0.0
    sort_per_byte = max(per_byte - read_per_byte, 1e-12)
    q_fixed, q_per_byte = fit_line(b, [p["query_s"] for p in points])
    cells = sum(p.get("cells", 0) for p in points)
    # a query time that does not grow with size (noise above the slope): the scan rate is
    # not separable; 0 leaves ``scan_bytes_per_s`` in effect instead of an absurd rate
    return {"rewrite_fixed_s": fixed,
            "rewrite_read_bytes_per_s": 1.0 / read_per_byte if read_per_byte else 0.0,
            "sort_bytes_per_s": 1.0 / sort_per_byte, "query_fixed_s": q_fixed,
            "query_scan_bytes_per_s": 1.0 / q_per_byte if q_per_byte > 1e-12 else 0.0,
            # the unit of the rewrite rates: points without cells give 0, and plans then
            # price compressed bytes
            "rewrite_cell_bytes": (round(sum(b) / cells, 6)
                                   if cells and all("cells" in p for p in points) else 0.0)}


def cold_start(first_s: float, warm_s: Sequence[float], fresh: bool) -> float | None:
    """The cold-start term: the session's first rewrite job less the median of the same
    rewrite warm (clamped at 0); None when the session was not fresh (a rewrite had run in
    it already: its first job measured nothing cold).

    Example:
    >>> cold_start(9.5, [2.0, 1.5, 2.5], True), cold_start(9.5, [2.0], False)
    (7.5, None)
    """
    if not fresh or not warm_s:
        return None
    return round(max(0.0, first_s - statistics.median(warm_s)), 4)
