"""δ-similar workloads (PAW §III-C): box distance, extended queries, matching, unknown δ.

Distances are taken per dimension after clipping open bounds to the data's domain and
dividing by the domain length, so δ is a fraction of the domain (our reading of Def. 1).
Pass ``domain=None`` for raw, unnormalised distances on closed boxes.

Example (Def. 1):
>>> from engine.design.paw.boxes import DBox
>>> dist_box(DBox.closed([0, 5], [10, 8]), DBox.closed([1, 5], [12, 9]))
2.0
"""

from __future__ import annotations

import math  # noqa: F401 (the docstring examples use math.inf)
from typing import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from engine.core.errors import InvalidParameterError
from engine.design.paw.boxes import DBox

Domain = tuple[np.ndarray, np.ndarray]  # per-dimension min and max of the data


def _clipped(q: DBox, domain: Domain | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds clipped to the domain and the per-dimension length to divide by."""
    if domain is None:
        return q.lo, q.hi, np.ones(q.d)
    lo_d, hi_d = domain
    length = np.where(hi_d > lo_d, hi_d - lo_d, 1.0)
    return np.clip(q.lo, lo_d, hi_d), np.clip(q.hi, lo_d, hi_d), length


def dist_box(a: DBox, b: DBox, domain: Domain | None = None) -> float:
    """Def. 1: max over dimensions of max(|a.l − b.l|, |a.u − b.u|), normalised by the domain."""
    alo, ahi, length = _clipped(a, domain)
    blo, bhi, _ = _clipped(b, domain)
    return float(np.max(np.maximum(np.abs(alo - blo), np.abs(ahi - bhi)) / length))


def extend(q: DBox, delta: float, domain: Domain | None = None) -> DBox:
    """The extended query q* (Lemma 1): ±δ·len on every *constrained* dimension; ±inf stays.

    With a ``domain`` δ is a fraction of it, at most 1 (q* then covers the whole domain);
    without one it is in the data's own units (raw distances), so any δ >= 0 is allowed.

    >>> extend(DBox.closed([10, -math.inf], [19, 19]), 2).lo.tolist()
    [8.0, -inf]
    """
    if not delta >= 0:
        raise InvalidParameterError(f"delta must be >= 0, got {delta}")
    if domain is not None and delta > 1:  # a fraction of the domain: q* covers it all at 1
        raise InvalidParameterError(f"delta must be a fraction of the domain, at most 1, got {delta}")
    _, _, length = _clipped(q, domain)
    step = delta * length
    lo = np.where(np.isinf(q.lo), q.lo, q.lo - step)
    hi = np.where(np.isinf(q.hi), q.hi, q.hi + step)
    return DBox(lo, hi, q.lo_inc.copy(), q.hi_inc.copy())


def distance_matrix(qf: Sequence[DBox], qh: Sequence[DBox], domain: Domain | None = None) -> np.ndarray:
    """Pairwise Def. 1 distances, |qf| × |qh|."""
    return np.array([[dist_box(a, b, domain) for b in qh] for a in qf]).reshape(len(qf), len(qh))


def _perfect_under(dist: np.ndarray, delta: float, k: int) -> bool:
    """Whether a matching uses every Q_F query once and every Q_H query k times (Def. 2)."""
    n_f, n_h = dist.shape
    adj = np.repeat(dist <= delta, k, axis=1)  # Q_H node j replicated k times
    match = maximum_bipartite_matching(csr_matrix(adj.astype(np.int8)), perm_type="column")
    return int(np.sum(match >= 0)) == n_f == n_h * k


def is_delta_similar(qh: Sequence[DBox], qf: Sequence[DBox], delta: float,
                     domain: Domain | None = None) -> bool:
    """Def. 2, decided by a maximum bipartite matching; |Q_F| must be a multiple of |Q_H|."""
    if not qh or len(qf) % len(qh):
        return False
    return _perfect_under(distance_matrix(qf, qh, domain), delta, len(qf) // len(qh))


def min_similar_delta(qh: Sequence[DBox], qf: Sequence[DBox], domain: Domain | None = None) -> float:
    """The smallest δ making Q_H and Q_F δ-similar: a bottleneck perfect matching.

    Binary search over the sorted distinct pairwise distances (PAW §IV-E).
    """
    if not qh or not qf or len(qf) % len(qh):
        raise InvalidParameterError(f"|Q_F| = {len(qf)} must be a positive multiple of |Q_H| = {len(qh)}")
    dist = distance_matrix(qf, qh, domain)
    k = len(qf) // len(qh)
    values = np.unique(dist)
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _perfect_under(dist, values[mid], k):
            hi = mid
        else:
            lo = mid + 1
    return float(values[lo])


def nearest_delta(qh: Sequence[DBox], qf: Sequence[DBox], domain: Domain | None = None) -> float:
    """The smallest δ within which every Q_F query has *some* Q_H query (the one-sided
    Hausdorff distance): Def. 2 without "every q ∈ Q_H used |Q_F|/|Q_H| times".

    Not the paper's δ′ (a departure, ``DELTA_ESTIMATORS["auto-nearest"]``): on a skewed history
    whose halves hold different numbers of queries per cluster, the perfect matching must
    pair some query with another cluster's, and δ′ becomes the distance between clusters
    (``bench/paw/README.md``).

    >>> qh = [DBox.closed([0, 0], [10, 10]), DBox.closed([50, 50], [60, 60])]
    >>> qf = [DBox.closed([1, 1], [11, 11]), DBox.closed([2, 2], [12, 12])]
    >>> min_similar_delta(qh, qf), nearest_delta(qh, qf)
    (48.0, 2.0)
    """
    if not qh or not qf:
        raise InvalidParameterError("both workloads need at least one query")
    return float(distance_matrix(qf, qh, domain).min(axis=1).max())


#: how ``delta="auto…"`` estimates δ from the two halves of the history: ``"auto"`` the paper's
#: δ′ (§IV-E, Def. 2's perfect matching); ``"auto-nearest"`` the one-sided nearest distance
DELTA_ESTIMATORS = {"auto": min_similar_delta, "auto-nearest": nearest_delta}


def estimate_delta(history: Sequence[DBox], domain: Domain | None = None, method: str = "auto") -> float:
    """Unknown δ (§IV-E): δ′ between the older and the newer half of the history.

    ``history`` is in timestamp order; with an odd count the oldest query is dropped.
    ``method`` is a key of :data:`DELTA_ESTIMATORS` (default the paper's).
    """
    if method not in DELTA_ESTIMATORS:
        raise InvalidParameterError(f"delta estimator must be one of {', '.join(DELTA_ESTIMATORS)}, got {method!r}")
    qs = list(history)[len(history) % 2:]
    if len(qs) < 2:
        raise InvalidParameterError("estimating delta needs at least 2 history queries")
    half = len(qs) // 2
    return DELTA_ESTIMATORS[method](qs[:half], qs[half:], domain)


def perturb(queries: Sequence[DBox], delta: float, domain: Domain,
            rng: np.random.Generator) -> list[DBox]:
    """A δ-similar future workload: each finite bound moved by U[−δ·len, δ·len], keeping l ≤ u."""
    out = []
    lo_d, hi_d = domain
    length = np.where(hi_d > lo_d, hi_d - lo_d, 1.0)
    for q in queries:
        lo = q.lo + rng.uniform(-delta, delta, q.d) * length
        hi = q.hi + rng.uniform(-delta, delta, q.d) * length
        lo, hi = np.where(np.isinf(q.lo), q.lo, lo), np.where(np.isinf(q.hi), q.hi, hi)
        crossed = lo > hi  # both ends finite there
        mid = np.where(crossed, (np.where(crossed, lo, 0) + np.where(crossed, hi, 0)) / 2, 0)
        lo, hi = np.where(crossed, mid, lo), np.where(crossed, mid, hi)
        out.append(DBox(lo, hi, q.lo_inc.copy(), q.hi_inc.copy()))
    return out
