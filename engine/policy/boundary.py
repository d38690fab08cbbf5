"""Algorithm 1 (WAIR, section 3): recluster the boundary partitions of every query.

For a range predicate ``[l, r]`` on the clustering key, the boundary partitions are those
whose range covers l, then those whose range covers r; each set is reclustered (sorted and
cut back into as many partitions). ``Recluster(x)`` skips degenerate partitions ``[x, x]``.
The paper proves an O(log q) amortized overhead with the potential

    phi(a, b) = 0                                   if a == b or ceil(a) > floor(b)
              = 4 + 4 log2(floor(b) - ceil(a) + 1)  otherwise

which :func:`potential` computes (the proof's keys are integers 1..2q after rescaling).

Two layers:

* value-level functions (:func:`recluster_at`, :func:`algorithm1`) over partitions given as
  arrays of key values, for the theory and hand-checked examples;
* :class:`GreedyBoundaryPolicy`, a baseline Policy over zonemaps: the union of the window's
  boundary partitions at every predicate's l and r on one key, sorted by that key in chunks
  of k_max (section 3.3's memory limit), with no cost model gate.

Example (m = 2 values per partition; a query [4, 6]):
>>> import numpy as np
>>> parts = [np.array([1., 5.]), np.array([3., 8.]), np.array([6., 9.])]
>>> after, sets = algorithm1(parts, 4.0, 6.0)
>>> sets  # covers 4: P0, P1; after that recluster, what covers 6
[[0, 1], [1, 2]]
>>> [p.tolist() for p in after]
[[1.0, 3.0], [5.0, 6.0], [8.0, 9.0]]
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

import numpy as np

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.policy.base import PlanGroup, Policy, PolicyContext, Proposal
from engine.policy.costmodel import groups_rewrite_cost, money
from engine.policy.wair.groups import chunk_members
from engine.policy.wair.savings import breakdown_for_window
from engine.scan.pruning import covering_candidates


def potential(a: float, b: float) -> float:
    """phi(a, b) of one partition with key range [a, b] (section 3.2)."""
    lo, hi = math.ceil(a), math.floor(b)
    if a == b or lo > hi:
        return 0.0
    return 4.0 + 4.0 * math.log2(hi - lo + 1)


def table_potential(parts: Sequence[np.ndarray]) -> float:
    """Phi: the sum of phi over all (non-empty) partitions."""
    return sum(potential(float(p.min()), float(p.max())) for p in parts if len(p))


def covering(parts: Sequence[np.ndarray], x: float) -> list[int]:
    """Indices of partitions whose range covers x, skipping the degenerate [x, x]."""
    out = []
    for i, p in enumerate(parts):
        a, b = float(p.min()), float(p.max())
        if a <= x <= b and not (a == b == x):
            out.append(i)
    return out


def recluster_at(parts: Sequence[np.ndarray], x: float) -> tuple[list[np.ndarray], list[int]]:
    """Recluster(x): sort the rows of the partitions covering x and cut them back into as
    many partitions of equal size (in the same slots). Returns (new parts, indices)."""
    idx = covering(parts, x)
    out = list(parts)
    if len(idx) < 2:
        return out, idx
    merged = np.sort(np.concatenate([parts[i] for i in idx]))
    sizes = [len(parts[i]) for i in idx]
    pos = np.cumsum([0] + sizes)
    for k, i in enumerate(idx):
        out[i] = merged[pos[k]:pos[k + 1]]
    return out, idx


def algorithm1(parts: Sequence[np.ndarray], l: float, r: float) -> tuple[list[np.ndarray], list[list[int]]]:
    """Algorithm 1 for one predicate [l, r]: Recluster(l) then Recluster(r)."""
    after, first = recluster_at(parts, l)
    after, second = recluster_at(after, r)
    return after, [first, second]


# ---------------------------------------------------------------------- zonemap level
def boundary_mask(lo: np.ndarray, hi: np.ndarray, valid: np.ndarray, x: Any) -> np.ndarray:
    """Partitions whose [lo, hi] covers x (unknown bounds count: they might), skipping [x, x]."""
    covers = (lo <= x) & (x <= hi)
    degenerate = (lo == x) & (hi == x)
    return (covers & ~degenerate) | ~valid


class GreedyBoundaryPolicy(Policy):
    """Algorithm 1 as a baseline policy: recluster every boundary partition of the window."""

    name = "greedy"

    def __init__(self, key: str | None = None, window: int = 50, k_max: int = 64) -> None:
        if window < 1 or k_max < 1:
            raise InvalidParameterError("greedy policy: window and k_max must be >= 1")
        self.key = key
        self.window = window
        self.k_max = k_max

    def _key(self, ctx: PolicyContext, window: Sequence[Any]) -> str | None:
        if self.key is not None:
            ctx.zonemaps.column(self.key)  # raises ColumnNotFoundError
            return self.key
        counts = Counter(c for f in window for c in f.predicated_columns if c in ctx.zonemaps.columns)
        return counts.most_common(1)[0][0] if counts else None

    def select(self, ctx: PolicyContext) -> tuple[str | None, np.ndarray]:
        """(key, zonemap indices of the boundary partitions at every l and r of the window).

        Each bound is looked up in the key's sorted endpoints
        (:func:`engine.scan.pruning.covering_candidates`) and :func:`boundary_mask` runs
        on those candidates only, plus the partitions without bounds (which always
        count): the same set as testing every partition, in O(log n + k) per bound."""
        window = list(ctx.window)[-self.window:]
        key = self._key(ctx, window)
        if key is None:
            return None, np.zeros(0, dtype=np.int64)
        col = ctx.zonemaps.column(key)
        found = [np.zeros(0, dtype=np.int64)]
        for frag in window:
            for box in frag.boxes:
                rng = box.get(key)
                if rng is None:
                    continue
                for bound in (rng.min, rng.max):
                    if bound is not None:
                        x = logical_types.encode_scalar(col.ltype, bound)
                        cand = covering_candidates(ctx.zonemaps, key, x)
                        found.append(cand[boundary_mask(col.lo[cand], col.hi[cand],
                                                        col.valid[cand], x)])
        if len(found) > 1:  # some bound was looked up: partitions without bounds count
            found.append(np.flatnonzero(~np.asarray(col.valid, dtype=bool)))
        return key, np.unique(np.concatenate(found))

    def propose(self, ctx: PolicyContext) -> Proposal | None:
        key, idx = self.select(ctx)
        if key is None or idx.size == 0:
            return None
        zm = ctx.zonemaps
        chunks = chunk_members(zm, idx, np.arange(idx.size), key, self.k_max)
        window = list(ctx.window)[-self.window:]
        scans = ctx.scans[-self.window:]  # a slice: a lazy window prunes only these
        saved = {"bytes": 0.0, "cpu_seconds": 0.0, "money": 0.0, "window_queries": float(len(window))}
        if len(scans) == len(window):
            br = breakdown_for_window(zm, scans, window, ctx.settings)
            cpu = float(br.saving_cpu[idx].sum())
            saved.update(bytes=float(br.bytes_saved[idx].sum()), cpu_seconds=cpu,
                         money=money(cpu, ctx.settings))
        per_query = saved["cpu_seconds"] / max(len(window), 1)
        groups = tuple(PlanGroup(partitions=tuple(str(p) for p in zm.paths[c]), layout="sort",
                                 columns=(key,),
                                 reason=f"Algorithm 1: partitions covering a predicate bound on {key}")
                       for c in chunks)
        cost = groups_rewrite_cost(zm, groups, ctx.settings)
        return Proposal(policy=self.name, params={"key": key, "window": self.window, "k_max": self.k_max},
                        groups=groups, estimated_cost=cost, predicted_saving=saved,
                        break_even_queries=cost.cpu_seconds / per_query if per_query > 0 else None,
                        details={"boundary_partitions": int(idx.size)})
