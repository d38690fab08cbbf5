"""What a plan will do to each query and each column, predicted from zonemaps alone.

Before a rewrite only the zonemaps are known, so the new files' zonemaps are predicted with
the assumption the pruning estimate already makes (values uniform within a partition's
``[min, max]``, :mod:`engine.scan.pruning`):

* on a group's key columns, rows are reordered: the group's values, a row-weighted mixture
  of uniform ranges, are cut at equal-row quantiles into the new files. One key column
  gives one slice per file (a sort); ``d`` key columns (Z-order, Hilbert, Qd-tree) give
  ``ceil(files ** (1/d))`` slices per column, the grid those curves approximate;
* on every other column, the rewrite mixes the group's rows, so each new file may hold any
  value of the group: its range becomes the union of the group's ranges. This is the side
  effect a sort on one column has on a column the old order served (the loss WAIR's
  savings do not count; the cost issue's "net of losses").

The prediction then scores every query of the window on both zonemaps (bytes and
partitions read before and after) and every filtered column's average depth. String key
columns keep the union (no interpolation between strings): a conservative prediction.

Example (two partitions of 100 rows, both spanning a = [0, 10]; b = [0, 1] and [2, 3]):
>>> import numpy as np
>>> from engine.policy.base import PlanGroup
>>> from engine.table.model import ColumnStats, Partition, TableSchema, ZoneMaps
>>> schema = TableSchema((("a", "float"), ("b", "float")))
>>> parts = [Partition(f"p{i}", 100, 1000, {"a": ColumnStats(0.0, 10.0), "b": ColumnStats(2.0 * i, 2.0 * i + 1)})
...          for i in range(2)]
>>> after = predicted_zonemaps(ZoneMaps.from_partitions(schema, parts),
...                            [PlanGroup(("p0", "p1"), "sort", ("a",))])
>>> after.column("a").lo.tolist(), after.column("a").hi.tolist()
([0.0, 5.0], [5.0, 10.0])
>>> after.column("b").lo.tolist(), after.column("b").hi.tolist()
([0.0, 0.0], [3.0, 3.0])
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from engine.metrics.overlap import column_clustering
from engine.scan.pruning import analyze_workload
from engine.table.model import ColumnZoneMap, ZoneMaps

if TYPE_CHECKING:
    from engine.policy.base import PlanGroup
    from engine.workload.model import ScanFragment


def predicted_zonemaps(zm: ZoneMaps, groups: Sequence["PlanGroup"]) -> ZoneMaps:
    """``zm`` with each group's partitions replaced by as many new files, their zonemaps
    predicted as the module docstring says; untouched partitions keep theirs."""
    position = {str(p): i for i, p in enumerate(zm.paths)}
    touched = np.zeros(len(zm), dtype=bool)
    new_parts: list[dict[str, Any]] = []
    for g, group in enumerate(groups):
        idx = np.array([position[p] for p in group.partitions if p in position], dtype=np.int64)
        if idx.size == 0:
            continue
        touched[idx] = True
        new_parts.extend(_rewrite_group(zm, idx, tuple(group.columns), g))
    keep = np.flatnonzero(~touched)
    kept = zm.subset(keep)
    if not new_parts:
        return kept
    columns = {}
    for name, cz in kept.columns.items():
        columns[name] = ColumnZoneMap(
            cz.ltype,
            np.concatenate([cz.lo, np.array([p["lo"][name] for p in new_parts], dtype=cz.lo.dtype)]),
            np.concatenate([cz.hi, np.array([p["hi"][name] for p in new_parts], dtype=cz.hi.dtype)]),
            np.concatenate([cz.valid, np.array([p["valid"][name] for p in new_parts])]),
            np.concatenate([cz.null_count, np.array([p["nulls"][name] for p in new_parts])]),
            np.concatenate([cz.compressed_bytes, np.array([p["cbytes"][name] for p in new_parts])]))
    seq = np.concatenate([kept.created_seq, np.full(len(new_parts), kept.created_seq.max(initial=0) + 1)]) \
        if len(kept.created_seq) == len(kept.paths) else kept.created_seq
    return ZoneMaps(paths=np.concatenate([kept.paths, np.array([p["path"] for p in new_parts], dtype=object)]),
                    rows=np.concatenate([kept.rows, np.array([p["rows"] for p in new_parts], dtype=np.int64)]),
                    bytes=np.concatenate([kept.bytes, np.array([p["bytes"] for p in new_parts], dtype=np.int64)]),
                    columns=columns, created_seq=seq)


def _rewrite_group(zm: ZoneMaps, idx: np.ndarray, keys: tuple[str, ...], g: int) -> list[dict[str, Any]]:
    files = len(idx)
    rows, nbytes = zm.rows[idx].astype(np.float64), zm.bytes[idx]
    slices = files if len(keys) == 1 else math.ceil(files ** (1.0 / max(len(keys), 1)))
    out = [{"path": f"<predicted group {g} file {j}>", "rows": int(round(rows.sum() / files)),
            "bytes": int(round(nbytes.sum() / files)), "lo": {}, "hi": {}, "valid": {}, "nulls": {},
            "cbytes": {}} for j in range(files)]
    for name, cz in zm.columns.items():
        lo, hi, valid = cz.lo[idx], cz.hi[idx], cz.valid[idx]
        all_valid = bool(valid.all())
        union = (min(lo[valid].tolist()), max(hi[valid].tolist())) if valid.any() else (lo[0], hi[0])
        cuts = (_quantile_cuts(lo, hi, rows, slices)
                if name in keys and all_valid and cz.ltype != "string" else None)
        nulls = int(cz.null_count[idx].sum()) if (cz.null_count[idx] >= 0).all() else -1
        for j, part in enumerate(out):
            if cuts is not None:
                s = (j // slices ** keys.index(name)) % slices
                part["lo"][name], part["hi"][name] = cuts[s], cuts[s + 1]
            else:
                part["lo"][name], part["hi"][name] = union
            part["valid"][name] = all_valid
            part["nulls"][name] = -1 if nulls < 0 else int(round(nulls / files))
            part["cbytes"][name] = int(round(cz.compressed_bytes[idx].sum() / files))
    return out


def _quantile_cuts(lo: np.ndarray, hi: np.ndarray, weights: np.ndarray, slices: int) -> np.ndarray:
    """``slices + 1`` equal-weight cut points of the mixture of uniform ``[lo, hi]`` ranges,
    a zero-width range being a point mass: the inverse of the mixture's CDF, linear between
    range ends and jumping at point masses."""
    lo, hi = lo.astype(np.float64), hi.astype(np.float64)
    grid = np.unique(np.concatenate([lo, hi]))
    width = hi - lo
    spread = width > 0
    ramp = (weights[spread][None, :] * np.clip(
        (grid[:, None] - lo[spread][None, :]) / width[spread][None, :], 0, 1)).sum(1)
    mass_lo, mass_w = lo[~spread], weights[~spread]
    left = ramp + (mass_w[None, :] * (mass_lo[None, :] < grid[:, None])).sum(1)
    right = ramp + (mass_w[None, :] * (mass_lo[None, :] <= grid[:, None])).sum(1)
    xs, cdf = np.repeat(grid, 2), np.column_stack([left, right]).ravel()
    targets = np.linspace(0.0, float(weights.sum()), slices + 1)
    cuts = np.empty(slices + 1)
    for n, target in enumerate(targets):
        k = int(np.searchsorted(cdf, target, side="left"))
        if k == 0 or xs[k] == xs[k - 1] or cdf[k] == cdf[k - 1]:
            cuts[n] = xs[min(k, len(xs) - 1)]
        else:
            cuts[n] = xs[k - 1] + (target - cdf[k - 1]) / (cdf[k] - cdf[k - 1]) * (xs[k] - xs[k - 1])
    cuts[0], cuts[-1] = grid[0], grid[-1]
    return cuts


def plan_impact(zm: ZoneMaps, groups: Sequence["PlanGroup"], fragments: Sequence["ScanFragment"],
                columns: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Per query (partitions and bytes read before and after) and per column (average depth
    before and after) for the predicted rewrite; queries in ``fragments`` order."""
    after = predicted_zonemaps(zm, groups)
    queries = []
    for frag, b, a in zip(fragments, analyze_workload(zm, fragments), analyze_workload(after, fragments)):
        queries.append({"query_id": frag.query_id,
                        "partitions_before": int(b.scanned.sum()), "partitions_after": int(a.scanned.sum()),
                        "bytes_before": float(b.bytes_scanned), "bytes_after": float(a.bytes_scanned)})
    depth = []
    for name in columns:
        before, later = column_clustering(zm, name), column_clustering(after, name)
        depth.append({"column": name, "depth_before": before.average_depth,
                      "depth_after": later.average_depth})
    return {"queries": queries, "columns": depth}
