"""Alg. 1 of PAW: the multi-group (irregular) split of a partition.

The extended queries that touch a partition P_o are clipped to it and merged into disjoint
MBRs (grouped partitions GP). A GP holding fewer than ``b_min`` rows is grown around its
centre by the F_GP expansion until it holds ``b_min`` rows (ties included). The rows outside
every GP′ form the irregular partition IP, which no extended query touches. The split fails
(``None``) when two GP′ overlap or the IP would hold fewer than ``b_min`` rows.
Cost(𝐏′, Q_F*(P_o)) = Σ_i |group_i|·|GP′_i| (Alg. 1 steps 1-6) when every query lies inside
the data: the price is each query's rows under the router's rule (§IV-D), so a query that
misses the data's MBR but meets the node's unbounded descriptor is charged the IP (or the GP′
whose descriptor reaches out to it), the partition it will actually read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from engine.design.paw.boxes import DBox, covered, mbr

EPSILON = 1e-9  # r_d = 0 (a point predicate) uses ε·domain_d (decided)


@dataclass(frozen=True)
class GroupSplit:
    """A successful multi-group split: the GP′ boxes, their queries and rows, and the IP rows."""

    boxes: tuple[DBox, ...]  # GP′ clipped to the region (the node's box ∩ the data's MBR)
    groups: tuple[tuple[int, ...], ...]  # query indices (into the input list) inside each GP′
    members: tuple[np.ndarray, ...]  # row masks of each GP′ over the input rows
    ip: np.ndarray  # row mask of the irregular partition
    cost: float  # rows the input queries read under the router's rule (eq. 1-2)
    descriptors: tuple[DBox, ...] = ()  # GP′ as routed: sides on the region's bound reach ``outer``

    @property
    def sizes(self) -> list[int]:
        return [int(m.sum()) for m in self.members]


def merge_groups(boxes: Sequence[DBox]) -> list[tuple[DBox, list[int]]]:
    """Step 2: merge intersecting closed boxes into their MBR until no two intersect."""
    groups = [(b, [i]) for i, b in enumerate(boxes)]
    merged = True
    while merged:
        merged = False
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                if groups[a][0].intersects(groups[b][0]):
                    box = mbr([groups[a][0], groups[b][0]])
                    groups[a] = (box, groups[a][1] + groups[b][1])
                    del groups[b]
                    merged = True
                    break
            if merged:
                break
    return groups


def expand(gp: DBox, x: np.ndarray, region: DBox, b_min: int, domain_len: np.ndarray) -> DBox:
    """Step 3: GP′ = c ± f*·r clipped to the partition, f* the b_min-th smallest F_GP(x).

    Every row with F ≤ f* is inside (ties included), so GP′ may hold more than ``b_min``.

    >>> g = np.stack(np.meshgrid(np.arange(100.0), np.arange(100.0), indexing="ij"), -1).reshape(-1, 2)
    >>> box = expand(DBox.closed([80, 10], [84, 19]), g, DBox.closed([0, 0], [99, 99]), 100, np.full(2, 99.0))
    >>> np.round(box.lo, 2).tolist(), np.round(box.hi, 2).tolist(), int(box.contains(g).sum())
    ([78.67, 7.0], [85.33, 22.0], 112)

    A side that rounds past a row keeps the row (c - f*·r is 4.4e-16 here, the row is at 0):

    >>> x = np.array([[0.0, 10.0], [6.0, 10.0], [3.0, 10.0]])
    >>> box = expand(DBox.closed([0.55, 9.55], [5.45, 10.45]), x, DBox.closed([0, 0], [6.45, 49]), 3, np.full(2, 49.0))
    >>> int(box.contains(x).sum())
    3
    """
    c = (gp.lo + gp.hi) / 2
    r = (gp.hi - gp.lo) / 2
    r = np.where(r > 0, r, EPSILON * domain_len)
    f = np.max(np.abs(x - c) / r, axis=1)
    k = min(b_min, len(f)) - 1
    f_star = float(np.partition(f, k)[k])
    # c ± f*·r rounds: a row with F = f* may fall a few ULPs outside (c - f*·r = 4.4e-16
    # above a row at 0, say), so the sides are widened to the rows with F <= f* themselves
    inner = x[f <= f_star]
    lo, hi = c - f_star * r, c + f_star * r
    if len(inner):
        lo, hi = np.minimum(lo, inner.min(axis=0)), np.maximum(hi, inner.max(axis=0))
    return DBox.closed(lo, hi).intersect(region)


def descriptor(box: DBox, region: DBox, outer: DBox) -> DBox:
    """GP′ as the router sees it: a side on ``region``'s bound moves out to ``outer``'s.

    ``region`` is ``outer`` ∩ the data's MBR; rows beyond the fitted domain stay routable and
    a query's open end does not reach the IP for nothing.
    """
    lo_out, hi_out = box.lo <= region.lo, box.hi >= region.hi
    return DBox(np.where(lo_out, outer.lo, box.lo), np.where(hi_out, outer.hi, box.hi),
                np.where(lo_out, outer.lo_inc, box.lo_inc), np.where(hi_out, outer.hi_inc, box.hi_inc))


def routed_cost(queries: Sequence[DBox], outer: DBox, descriptors: Sequence[DBox], sizes: Sequence[int],
                ip_rows: int) -> float:
    """Σ_q Cost(𝐏′, q) (eq. 1-2) as the router charges it (§IV-D, ``PawTree.leaves_for``).

    A query reads every GP′ whose descriptor it meets, and the IP unless its part inside
    ``outer`` lies in the union of the GP′ descriptors (exact box subtraction).
    """
    total = 0.0
    for q in queries:
        part = q.intersect(outer)
        if part.is_empty():
            continue
        hit = [j for j, d in enumerate(descriptors) if part.intersects(d)]
        total += sum(sizes[j] for j in hit)
        if not any(descriptors[j].contains_box(part) for j in hit) and \
                not covered(part, [descriptors[j] for j in hit]):
            total += ip_rows
    return total


def multi_group_split(x: np.ndarray, region: DBox, queries: Sequence[DBox], b_min: int,
                      domain_len: np.ndarray, outer: DBox | None = None) -> GroupSplit | None:
    """Alg. 1 on the rows ``x`` (rows × d) of partition ``region`` and its extended queries.

    ``outer`` is the node's own descriptor (``region`` = ``outer`` ∩ the data's MBR; default
    ``region``): a query that meets ``outer`` but not ``region`` forms no group, yet it is
    priced at the partitions the router will send it to (the IP, or a GP′ reaching out).
    Returns ``None`` (∅ in the paper) when no query touches the partition, two GP′ overlap
    or the IP holds fewer than ``b_min`` rows.
    """
    outer = region if outer is None else outer
    clipped = [q.intersect(region) for q in queries]
    kept = [(i, q) for i, q in enumerate(clipped) if not q.is_empty()]
    if not kept:
        return None
    groups = merge_groups([DBox.closed(q.lo, q.hi) for _, q in kept])
    boxes, members, ids = [], [], []
    for box, idx in groups:
        inside = box.intersect(region).contains(x)
        if inside.sum() < b_min:
            box = expand(box, x, region, b_min, domain_len)
            inside = box.contains(x)
        else:
            box = box.intersect(region)
        boxes.append(box)
        members.append(inside)
        ids.append(tuple(kept[i][0] for i in idx))
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            if boxes[a].intersects(boxes[b]):
                return None  # step 4: overlapping expansions
    ip = ~np.any(np.stack(members), axis=0)
    if int(ip.sum()) < b_min:
        return None  # step 5
    routed = tuple(descriptor(b, region, outer) for b in boxes)
    sizes = [int(m.sum()) for m in members]
    cost = routed_cost(queries, outer, routed, sizes, int(ip.sum()))
    return GroupSplit(tuple(boxes), tuple(ids), tuple(members), ip, cost, routed)
