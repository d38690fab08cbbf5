"""DD: the data-driven baseline in Dremio's style (WAIR section 2.2).

"Only a small subset of files with the highest overlapping depth within their key ranges
are reclustered at optimization cycles, until the table satisfies a user-defined
overlapping depth threshold." Each call proposes up to ``max_partitions`` (K) partitions
whose depth on ``key`` exceeds ``depth_threshold``, deepest first, sorted by ``key``. It
ignores the workload except to choose the key when none is given and to estimate, for
comparison with WAIR, what the window's queries would have saved. Depth is counted at
the unit engines skip (:func:`unit_depths`): where files hold several row groups and the
scans are charged by row groups (``settings.prune_row_groups``), a file is as deep as its
deepest row group, so a few large files each spanning the key's range are deep.

Helpers shared with DD-EP live here: :func:`choose_key`, :func:`window_saving_bytes`,
:func:`window_saving`, :func:`data_driven_proposal`.

The paper's DD (seed 000, section 6.1 (4)) prices nothing: it ranks by depth. The saving a
DD plan shows is for comparison with WAIR's, so it is priced by the rule every other saving
and bill uses (:func:`engine.policy.costmodel.read_seconds`: files x ``query_file_s`` +
bytes at the calibrated rate), converted per query as WAIR's equation 3 does: a query's
wasted bytes in the chosen partitions at its own seconds per byte read, so DD and WAIR
value the same rewrite alike (bytes alone at the scan rate would leave out the calibrated
per-file cost).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Mapping

import numpy as np

from engine.core import logical_types
from engine.core.errors import ColumnNotFoundError, InvalidParameterError
from engine.metrics.sweep import Sweep
from engine.policy.base import PlanGroup, Policy, PolicyContext, Proposal
from engine.policy.costmodel import groups_rewrite_cost, money, read_seconds
from engine.scan.batched import ragged_ranges

#: logical types a sort key may have (booleans hold two values: nothing to gain)
KEY_TYPES = tuple(t for t in logical_types.ORDERABLE_TYPES)


def choose_key(ctx: PolicyContext, key: str | None) -> str:
    """``key`` if given (checked); else, among the orderable columns the window predicates,
    the one whose poor clustering costs the workload most: average depth times the number
    of queries predicating it (the worst average depth alone would pick a column such as
    a discount rate that every partition spans and few queries use); without a workload,
    the orderable column with the worst average depth. Ties: deeper, then by name."""
    zm = ctx.zonemaps
    if key is not None:
        col = zm.column(key)  # ColumnNotFoundError names the columns
        if col.ltype not in KEY_TYPES:
            raise InvalidParameterError(f"column {key!r} of type {col.ltype} cannot be a sort key")
        return key
    uses: Counter[str] = Counter()
    for frag in ctx.window:
        for c in frag.predicated_columns:
            uses[c] += 1
    candidates = [c for c in uses if c in zm.columns and zm.columns[c].ltype in KEY_TYPES]
    if not candidates:
        candidates = [c for c, z in zm.columns.items() if z.ltype in KEY_TYPES]
    if not candidates:
        raise ColumnNotFoundError("the table has no orderable column to sort by")
    scored = []
    for c in candidates:
        z = zm.columns[c]
        ok = np.asarray(z.valid, dtype=bool)
        depth = float(Sweep(z.lo[ok], z.hi[ok]).depths().mean()) if ok.any() else 0.0
        scored.append((-depth * max(uses[c], 1), -depth, c))
    return min(scored)[2]


def window_saving_bytes(ctx: PolicyContext, chosen: np.ndarray, key: str | None = None) -> float:
    """Bytes the window's queries would not have read had the chosen partitions been
    perfectly clustered: sum over fragments of ``(1 - u) * read_bytes`` of the chosen
    scanned partitions (WAIR equation 3 without the time conversion), read from each
    scan's sparse index (never a dense partitions x queries mask). With ``key``, only
    the fragments predicating ``key`` count: sorting by one column does nothing for a
    query that does not filter on it."""
    return window_saving(ctx, chosen, key)[0]


def window_saving(ctx: PolicyContext, chosen: np.ndarray, key: str | None = None
                  ) -> tuple[float, float]:
    """(bytes, CPU-seconds) the window's queries would have saved had the chosen partitions
    been perfectly clustered: :func:`window_saving_bytes`, and each query's wasted bytes
    priced at its own read time per byte, ``read_seconds(size_read(Q), files(Q)) /
    size_read(Q)`` (WAIR's equation 3 without a measured duration), so a per-file cost
    counts as WAIR and the bill count it.

    Example (one query reading 2 files, 100 bytes in all; the chosen file wastes 30 bytes;
    1 s per file + 10 bytes/s: t_read = 2 + 10 = 12 s, 0.12 s per byte, 30 bytes -> 3.6 s):
    >>> from types import SimpleNamespace
    >>> from engine.core.config import Settings
    >>> from engine.scan.pruning import FragmentScan
    >>> scan = FragmentScan("q", np.array([True, True]), np.array([False, False]),
    ...                     np.array([0.4, 0.5]), np.array([50.0, 50.0]), ("a",))
    >>> ctx = SimpleNamespace(scans=[scan], settings=Settings(query_file_s=1.0,
    ...                       query_scan_bytes_per_s=10.0))
    >>> window_saving(ctx, np.array([True, False]))
    (30.0, 3.6)
    """
    total = seconds = 0.0
    for scan in ctx.scans:  # sparse: O(scanned partitions) per query, batched pruning
        if key is not None and key not in scan.predicated_columns:
            continue
        m = chosen[scan.index]
        if not m.any():
            continue
        waste = float(scan.waste[m].sum())
        size_q = float(scan.scanned_bytes.sum())
        total += waste
        if size_q > 0:
            seconds += waste * read_seconds(size_q, scan.scanned_count, ctx.settings) / size_q
    return total, seconds


def unit_depths(ctx: PolicyContext, key: str, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(depth, overlaps) on ``key`` of the files at positions ``ok`` (those with a valid
    range), at the unit engines skip: with the row groups the scans were charged by
    (``ctx.row_groups``, ``settings.prune_row_groups``) a file with several row groups is
    as deep as its deepest row group among every unit of the table (row groups, and the
    files that hold one), so a table of a few large files, each spanning the key's range
    in many row groups, is as deep as its row groups overlap; else each file's own.

    Example (two files of two row groups each, all four spanning [0, 10]):
    >>> from types import SimpleNamespace as NS
    >>> col = lambda lo, hi: NS(lo=np.array(lo), hi=np.array(hi), valid=np.ones(len(lo), bool))
    >>> files = NS(column=lambda k: col([0, 0], [10, 10]))
    >>> rg = NS(start=np.array([0, 2, 4]), zonemaps=NS(column=lambda k: col([0] * 4, [10] * 4)))
    >>> unit_depths(NS(zonemaps=files, row_groups=rg), "k", np.array([0, 1]))[0].tolist()
    [4, 4]
    >>> unit_depths(NS(zonemaps=files, row_groups=None), "k", np.array([0, 1]))[0].tolist()
    [2, 2]
    """
    z = ctx.zonemaps.column(key)
    rg = getattr(ctx, "row_groups", None)
    counts = (rg.start[1:] - rg.start[:-1])[ok] if rg is not None else np.zeros(0, np.int64)
    if not counts.any():
        sw = Sweep(z.lo[ok], z.hi[ok])
        return sw.depths(), sw.overlaps()
    gz = rg.zonemaps.column(key)
    sel = ragged_ranges(rg.start[ok[counts > 0]], counts[counts > 0])
    valid = np.asarray(gz.valid, dtype=bool)[sel]
    owner = np.repeat(np.arange(len(ok)), counts)[valid]  # positions in ok
    single = np.flatnonzero(counts == 0)
    lo = np.concatenate([np.asarray(gz.lo)[sel][valid], np.asarray(z.lo)[ok[single]]])
    hi = np.concatenate([np.asarray(gz.hi)[sel][valid], np.asarray(z.hi)[ok[single]]])
    owner = np.concatenate([owner, single])
    sw = Sweep(lo, hi)
    depth = np.zeros(len(ok), dtype=np.int64)
    over = np.zeros(len(ok), dtype=np.int64)
    np.maximum.at(depth, owner, np.asarray(sw.depths(), dtype=np.int64))
    np.maximum.at(over, owner, np.asarray(sw.overlaps(), dtype=np.int64))
    return depth, over


def data_driven_proposal(ctx: PolicyContext, policy: str, params: Mapping[str, Any],
                         chosen: np.ndarray, key: str, reason: str,
                         details: Mapping[str, Any]) -> Proposal:
    """One ``sort`` group over the chosen partitions, priced with the shared cost model."""
    settings = ctx.settings
    zm = ctx.zonemaps
    group = PlanGroup(partitions=tuple(str(p) for p in zm.paths[chosen]), layout="sort",
                      columns=(key,), reason=reason)
    cost = groups_rewrite_cost(zm, [group], settings)
    saved, saved_s = window_saving(ctx, chosen, key)
    nq = len(ctx.window)
    break_even = None
    if saved_s > 0 and nq:
        break_even = cost.cpu_seconds / (saved_s / nq)
    group = dataclasses.replace(group, predicted_saving_bytes=saved)
    return Proposal(policy=policy, params=dict(params), groups=(group,), estimated_cost=cost,
                    predicted_saving={"bytes": saved, "cpu_seconds": saved_s,
                                      "money": money(saved_s, settings),
                                      "window_queries": float(nq)},
                    break_even_queries=break_even, details=dict(details))


class DDPolicy(Policy):
    """Dremio-style data-driven reclustering (see the module docstring); it learns nothing
    from feedback (``observe`` is the no-op hook)."""

    name = "dd"

    def __init__(self, key: str | None = None, depth_threshold: float = 4,
                 max_partitions: int = 100) -> None:
        if depth_threshold < 1:
            raise InvalidParameterError(f"depth_threshold must be >= 1, got {depth_threshold}")
        if max_partitions < 1:
            raise InvalidParameterError(f"max_partitions must be >= 1, got {max_partitions}")
        self.key = key
        self.depth_threshold = float(depth_threshold)
        self.max_partitions = int(max_partitions)

    def select(self, ctx: PolicyContext, key: str) -> tuple[np.ndarray, dict[str, Any]]:
        """Mask of the chosen partitions and the evidence: the K deepest partitions whose
        depth exceeds the threshold (ties: more overlaps first, then snapshot order)."""
        z = ctx.zonemaps.column(key)
        ok = np.flatnonzero(np.asarray(z.valid, dtype=bool))
        n = len(ctx.zonemaps)
        chosen = np.zeros(n, dtype=bool)
        if len(ok) == 0:
            return chosen, {"average_depth": 0.0, "max_depth": 0, "over_threshold": 0}
        depths, overlaps = unit_depths(ctx, key, ok)
        over = np.flatnonzero(depths > self.depth_threshold)
        order = over[np.lexsort((ok[over], -overlaps[over], -depths[over]))]
        chosen[ok[order[: self.max_partitions]]] = True
        return chosen, {"average_depth": float(depths.mean()), "max_depth": int(depths.max()),
                        "over_threshold": int(len(over)),
                        "chosen_min_depth": int(depths[order[: self.max_partitions]].min())
                        if len(order) else 0}

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        key = choose_key(ctx, self.key)
        chosen, info = self.select(ctx, key)
        k = int(chosen.sum())
        if k == 0:
            self.last_decision_ = {"reason": (
                f"DD: no partition is deeper than {self.depth_threshold:g} on {key} "
                f"(deepest {info['max_depth']}, average {info['average_depth']:.1f})")}
            return None
        reason = (f"DD: the {k} deepest partitions on {key} (depth > {self.depth_threshold:g}, "
                  f"deepest {info['max_depth']}; {info['over_threshold']} over the threshold, "
                  f"table average depth {info['average_depth']:.1f}), sorted by {key}")
        params = {"key": key, "depth_threshold": self.depth_threshold,
                  "max_partitions": self.max_partitions}
        self.last_decision_ = {"reason": reason}
        return data_driven_proposal(ctx, self.name, params, chosen, key, reason,
                                    {"key": key, **info})
