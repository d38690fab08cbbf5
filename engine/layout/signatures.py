"""Savings signatures and their clustering into hybrid layouts (WAIR section 4.4).

Each selected partition's estimated saving is split over the columns the window's queries
predicate (equal shares per predicated column of a query): a vector ``s_P`` with one entry
per column. Unit-normalized, it is the partition's *savings signature*. Signatures are
clustered with DBSCAN under cosine distance, and each cluster is labelled with the anchor
nearest (cosine) to its centroid: the unit vectors ``e_i`` (one column dominates) or the
equal-weight blends ``v_S`` over 2..``max_blend`` columns. The label picks the layout:

* nearest anchor ``e_i``  -> ``"sort"`` on column i;
* nearest anchor ``v_S``  -> ``"hilbert"`` over S, columns in descending overall contribution;
* diffuse                 -> ``"qdtree"`` over the columns with savings, where diffuse means
  the best anchor similarity is below ``min_similarity`` (default 0.8: uniform savings
  over 5+ columns are at most sqrt(3/5) = 0.77 from any 3-column blend) or the centroid's
  effective number of columns ``(sum c)^2 / sum c^2`` (the participation ratio: 1 for one
  column, k for k equal columns) is at least ``diffuse_min_columns`` (default 4).

Columns "with savings" in a centroid are those holding at least ``min_share`` (1 %) of its
total. Noise points (label -1) fall back to their best single column.

Speed: on unit vectors ``|a - b|^2 = 2 (1 - cos(a, b))``, so cosine distance <= eps is
euclidean distance <= sqrt(2 eps). DBSCAN then runs on a kd-tree instead of scikit-learn's
brute-force cosine (seconds instead of a minute at 100k x 8). Identical signatures (common:
every partition touched only by one-column queries has exactly ``e_i``) are merged into one
weighted point first, which gives the same labels and keeps DBSCAN's neighbourhood lists
small. When more than ``exact_max_points`` distinct signatures remain, they are snapped to a
grid of ``eps_euclid / grid_ratio`` before merging (a point moves at most
``sqrt(d) * eps_euclid / (2 * grid_ratio)``), and if that is not enough DBSCAN runs on a
weighted uniform sample and the other points join their nearest core point's cluster
(see :func:`dbscan_cosine`). Memory and time stay bounded at any number of partitions.

Example:
>>> import numpy as np
>>> sig = savings_signatures(np.array([[3.0, 0.0]] * 6 + [[1.0, 1.0]] * 6))
>>> c = SavingsClusterer(eps=0.05, min_samples=3).fit(sig, ["ship", "commit"], contributions=[2, 1])
>>> sorted((lab, ch.kind, ch.columns) for lab, ch in c.cluster_layouts_.items())
[(0, 'sort', ('ship',)), (1, 'hilbert', ('ship', 'commit'))]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from engine.core.errors import InvalidParameterError
from engine.layout.base import NotFittedError


def savings_signatures(per_partition_column_savings: np.ndarray) -> np.ndarray:
    """Unit-normalize each row (zero rows stay zero); negative shares count as zero.

    A negative share (an estimate's rounding noise) cannot be won by reclustering on that
    column, so it is clipped before normalizing. NaN or infinite savings are refused.

    Example:
    >>> savings_signatures(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    s = np.asarray(per_partition_column_savings, dtype=np.float64)
    if s.ndim != 2:
        raise InvalidParameterError(f"savings must be a 2-D array [partitions, columns], got shape {s.shape}")
    if not np.isfinite(s).all():
        raise InvalidParameterError("savings contain NaN or infinite values")
    s = np.clip(s, 0.0, None)
    norm = np.linalg.norm(s, axis=1, keepdims=True)
    return np.divide(s, norm, out=np.zeros_like(s), where=norm > 0)


@dataclass(frozen=True)
class Anchor:
    """A reference direction: ``e_i`` (one column) or ``v_S`` (equal weights over S)."""

    name: str
    columns: tuple[str, ...]
    vector: np.ndarray = field(compare=False, repr=False)


@dataclass(frozen=True)
class LayoutChoice:
    """The layout a cluster (or a noise point) gets, and why."""

    kind: str  # "sort" | "hilbert" | "qdtree"
    columns: tuple[str, ...]
    anchor: str  # nearest anchor's name ("e:col", "v:a+b"), or "diffuse"
    similarity: float  # cosine similarity of the centroid (or point) to that anchor

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "columns": list(self.columns), "anchor": self.anchor,
                "similarity": self.similarity}


def euclidean_eps(eps_cosine: float) -> float:
    """The euclidean radius on unit vectors equivalent to a cosine-distance radius."""
    return math.sqrt(2.0 * eps_cosine)


def dbscan_cosine(x: np.ndarray, eps: float, min_samples: int, *, exact_max_points: int = 10_000,
                  grid_ratio: float = 20.0, seed: int = 0) -> np.ndarray:
    """DBSCAN labels of unit vectors ``x`` under cosine distance ``eps`` (kd-tree, merged duplicates).

    Equal to ``DBSCAN(eps, min_samples=min_samples, metric="cosine").fit(x).labels_`` (same
    numbering: clusters in the order of their first core point) as long as at most
    ``exact_max_points`` distinct rows remain. Beyond that, rows are snapped to a grid of
    ``eps_euclid / grid_ratio``; if still too many distinct rows remain, DBSCAN runs on a
    uniform sample of ``exact_max_points`` rows (each weighted n/m, so densities and
    ``min_samples`` keep their meaning) and every other row joins the cluster of its nearest
    sampled core point within eps, or is noise. Memory and time stay bounded either way.
    """
    from sklearn.cluster import DBSCAN  # scikit-learn: costly import, deferred to first fit
    from sklearn.neighbors import KDTree

    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    eps_euc = euclidean_eps(eps)
    uniq, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).ravel()
    if len(uniq) > exact_max_points:
        step = eps_euc / grid_ratio
        uniq, inverse, counts = np.unique(np.round(x / step), axis=0, return_inverse=True, return_counts=True)
        uniq, inverse = uniq * step, np.asarray(inverse).ravel()
    weights = counts.astype(np.float64)
    fit_idx = np.arange(len(uniq))
    if len(uniq) > exact_max_points:
        rows = np.random.default_rng(seed).choice(len(x), exact_max_points, replace=False)
        fit_idx, times = np.unique(inverse[rows], return_counts=True)
        weights = times * (len(x) / exact_max_points)
    fit_x = uniq[fit_idx]
    pairs = int(KDTree(fit_x).query_radius(fit_x, eps_euc, count_only=True).sum())
    if pairs * 8 <= NEIGHBOUR_BYTES:  # every neighbour list fits: scikit-learn's one pass
        model = DBSCAN(eps=eps_euc, min_samples=min_samples, algorithm="kd_tree")
        model.fit(fit_x, sample_weight=weights)
        fit_labels, fit_core = model.labels_, model.core_sample_indices_
    else:
        fit_labels, fit_core = dbscan_chunked(fit_x, eps_euc, min_samples, weights)
    uniq_labels = np.full(len(uniq), -1, dtype=np.int64)
    uniq_labels[fit_idx] = fit_labels
    core = np.zeros(len(uniq), dtype=bool)
    core[fit_idx[fit_core]] = True
    rest = np.setdiff1d(np.arange(len(uniq)), fit_idx)
    if len(rest) and core.any():
        core_idx = np.flatnonzero(core)
        dist, nearest = KDTree(uniq[core_idx]).query(uniq[rest], k=1)
        near = dist[:, 0] <= eps_euc
        uniq_labels[rest[near]] = uniq_labels[core_idx[nearest[near, 0]]]
    # Number clusters as scikit-learn does: in the order of their first core point (by row).
    first_row = np.full(len(uniq), len(x), dtype=np.int64)
    np.minimum.at(first_row, inverse, np.arange(len(x)))
    core_idx = np.flatnonzero(core)
    starts = uniq_labels[core_idx[np.argsort(first_row[core_idx], kind="stable")]]
    _, pos = np.unique(starts, return_index=True)
    renumber = np.full(uniq_labels.max() + 2, -1, dtype=np.int64)
    renumber[starts[np.sort(pos)]] = np.arange(len(pos))
    uniq_labels = renumber[uniq_labels]
    # A border point reachable from several clusters belongs, in scikit-learn, to the one
    # labelled first (the lowest number): its cluster does not depend on our row order.
    border = np.flatnonzero(~core & (uniq_labels >= 0))
    if len(border):
        tree, core_labels = KDTree(uniq[core_idx]), uniq_labels[core_idx]
        for part in _chunks(border, len(core_idx)):
            near = tree.query_radius(uniq[part], eps_euc)
            uniq_labels[part] = [core_labels[nb].min() if len(nb) else uniq_labels[b]
                                 for b, nb in zip(part, near)]
    return uniq_labels[inverse]


#: neighbour lists held at once while clustering, in bytes (int64 indices). scikit-learn's
#: DBSCAN holds every list at once: ``exact_max_points`` near-identical signatures make
#: that many squared (10,000 of them: 1e8 pairs, 1.5 GB of peak RSS). Above this budget
#: :func:`dbscan_chunked` finds them a chunk of points at a time (peak about 8x the budget:
#: the lists, their edge arrays), at several times the CPU of the one pass.
NEIGHBOUR_BYTES = 32 * 1024 * 1024


def _chunks(rows: np.ndarray, others: int) -> list[np.ndarray]:
    """``rows`` in chunks whose neighbour lists (at most ``others`` each) fit NEIGHBOUR_BYTES."""
    size = max(1, NEIGHBOUR_BYTES // (8 * max(others, 1)))
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def dbscan_chunked(x: np.ndarray, eps: float, min_samples: float,
                   weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean DBSCAN of weighted points: ``(labels, core indices)`` with the core points
    and clusters of ``sklearn.cluster.DBSCAN(eps, min_samples=min_samples,
    algorithm="kd_tree").fit(x, sample_weight=weights)`` (a point is core when the weights
    within ``eps`` of it, itself included, reach ``min_samples``; clusters are the connected
    components of core points within ``eps``; a non-core point within ``eps`` of a core
    point gets one of their clusters, -1 otherwise). Cluster numbers are the components'
    order of first core point; :func:`dbscan_cosine` renumbers and settles border points as
    scikit-learn does. Neighbourhoods are found in chunks (NEIGHBOUR_BYTES), so memory is
    bounded where scikit-learn holds every neighbour list at once."""
    from sklearn.neighbors import KDTree

    n = len(x)
    tree = KDTree(x, leaf_size=30)  # scikit-learn's neighbour order: the same weight sums
    every = np.arange(n)
    mass = np.empty(n, dtype=np.float64)
    for part in _chunks(every, n):
        mass[part] = [weights[nb].sum() for nb in tree.query_radius(x[part], eps)]
    core = np.flatnonzero(mass >= min_samples)
    labels = np.full(n, -1, dtype=np.int64)
    if core.size == 0:
        return labels, core
    ctree = KDTree(x[core])
    root = np.arange(core.size)  # union-find over core points, merged chunk by chunk
    for part in _chunks(np.arange(core.size), core.size):
        near = ctree.query_radius(x[core[part]], eps)
        u = np.repeat(part, [len(nb) for nb in near])
        v = np.concatenate(near)
        while True:  # link each edge's larger root under its smaller, then flatten
            ru, rv = root[u], root[v]
            cross = ru != rv
            if not cross.any():
                break
            u, v, ru, rv = u[cross], v[cross], ru[cross], rv[cross]
            np.minimum.at(root, np.maximum(ru, rv), np.minimum(ru, rv))
            while True:
                up = root[root]
                if np.array_equal(up, root):
                    break
                root = up
    # links point to smaller indices, so a root is its component's first core point: the
    # roots' ranks number the components in that order
    labels[core] = np.searchsorted(np.unique(root), root)
    rest = np.flatnonzero(labels < 0)
    for part in _chunks(rest, core.size):
        near = ctree.query_radius(x[part], eps)
        labels[part] = [labels[core[nb[0]]] if len(nb) else -1 for nb in near]
    return labels, core


class SavingsClusterer:
    """DBSCAN over savings signatures, then one :class:`LayoutChoice` per cluster.

    Parameters are stored as given; ``fit`` sets ``labels_`` (-1 = noise, and rows with no
    savings at all), ``anchors_``, ``centroids_`` (unit, per cluster), ``cluster_layouts_``,
    ``contributions_`` and ``columns_``.
    """

    def __init__(self, eps: float = 0.1, min_samples: int = 5, max_blend: int = 3,
                 diffuse_min_columns: int = 4, min_similarity: float = 0.8, min_share: float = 0.01,
                 exact_max_points: int = 10_000, grid_ratio: float = 20.0) -> None:
        self.eps = eps
        self.min_samples = min_samples
        self.max_blend = max_blend
        self.diffuse_min_columns = diffuse_min_columns
        self.min_similarity = min_similarity
        self.min_share = min_share
        self.exact_max_points = exact_max_points
        self.grid_ratio = grid_ratio

    def _validate(self) -> None:
        if not 0 < self.eps <= 2:
            raise InvalidParameterError(f"eps is a cosine distance in (0, 2], got {self.eps}")
        if self.min_samples < 1:
            raise InvalidParameterError(f"min_samples must be >= 1, got {self.min_samples}")
        if self.max_blend < 1:
            raise InvalidParameterError(f"max_blend must be >= 1, got {self.max_blend}")
        if self.diffuse_min_columns < 2:
            raise InvalidParameterError(f"diffuse_min_columns must be >= 2, got {self.diffuse_min_columns}")

    def fit(self, signatures: np.ndarray, columns: Sequence[str],
            contributions: np.ndarray | Sequence[float] | None = None) -> "SavingsClusterer":
        """Cluster ``signatures[n, d]`` (rows need not be normalized) over ``columns``.

        ``contributions[d]`` is each column's overall saving (orders Hilbert and Qd-tree
        columns); by default the column sums of the unit signatures.
        """
        self._validate()
        x = savings_signatures(signatures)
        cols = tuple(columns)
        if x.shape[1] != len(cols):
            raise InvalidParameterError(f"signatures have {x.shape[1]} columns but {len(cols)} names were given")
        if len(set(cols)) != len(cols):
            raise InvalidParameterError(f"duplicate column names in {list(cols)}")
        contrib = x.sum(axis=0) if contributions is None else np.asarray(contributions, dtype=np.float64)
        if contrib.shape != (len(cols),):
            raise InvalidParameterError(f"contributions must have one value per column ({len(cols)})")
        self.columns_ = cols
        self.contributions_ = contrib
        self.anchors_ = self._anchors(cols, x)
        self._anchor_matrix = np.stack([a.vector for a in self.anchors_]) if self.anchors_ else np.zeros((0, len(cols)))
        nonzero = np.linalg.norm(x, axis=1) > 0
        labels = np.full(len(x), -1, dtype=np.int64)
        labels[nonzero] = dbscan_cosine(x[nonzero], self.eps, self.min_samples,
                                        exact_max_points=self.exact_max_points, grid_ratio=self.grid_ratio)
        self.labels_ = labels
        self.centroids_: dict[int, np.ndarray] = {}
        self.cluster_layouts_: dict[int, Any] = {}
        for lab in np.unique(labels[labels >= 0]):
            c = x[labels == lab].mean(axis=0)
            c = c / (np.linalg.norm(c) or 1.0)
            self.centroids_[int(lab)] = c
            self.cluster_layouts_[int(lab)] = self.choose(c)
        return self

    def _anchors(self, cols: tuple[str, ...], x: np.ndarray) -> list[Anchor]:
        """``e_i`` for every column; ``v_S`` for every S of 2..max_blend columns that have savings."""
        d = len(cols)
        out = [Anchor(f"e:{c}", (c,), np.eye(d)[i]) for i, c in enumerate(cols)]
        active = [i for i in range(d) if x[:, i].any()] if len(x) else []
        for k in range(2, min(self.max_blend, len(active)) + 1):
            for combo in itertools.combinations(active, k):
                v = np.zeros(d)
                v[list(combo)] = 1.0 / math.sqrt(k)
                out.append(Anchor("v:" + "+".join(cols[i] for i in combo), tuple(cols[i] for i in combo), v))
        return out

    def _by_contribution(self, idx: Sequence[int], weight: np.ndarray) -> tuple[str, ...]:
        ranked = sorted(idx, key=lambda i: (-self.contributions_[i], -weight[i], i))
        return tuple(self.columns_[i] for i in ranked)

    def choose(self, signature: np.ndarray) -> LayoutChoice:
        """The layout for one direction (a centroid), by the rule in the module docstring."""
        self._check_fitted()
        c = np.clip(np.asarray(signature, dtype=np.float64), 0.0, None)
        norm = np.linalg.norm(c)
        if norm == 0:
            return self.layout_for_noise(c)
        c = c / norm
        sims = self._anchor_matrix @ c
        best = int(np.argmax(sims))  # ties: e_i before blends, smaller blends first
        sim = float(sims[best])
        effective = float(c.sum() ** 2 / (c ** 2).sum())
        if sim < self.min_similarity or effective >= self.diffuse_min_columns:
            with_savings = [i for i in range(len(c)) if c[i] >= self.min_share * c.sum()]
            anchor = self.anchors_[best]
            return LayoutChoice("qdtree", self._by_contribution(with_savings, c), f"diffuse (nearest {anchor.name})", sim)
        anchor = self.anchors_[best]
        if len(anchor.columns) == 1:
            return LayoutChoice("sort", anchor.columns, anchor.name, sim)
        idx = [self.columns_.index(col) for col in anchor.columns]
        return LayoutChoice("hilbert", self._by_contribution(idx, c), anchor.name, sim)

    def layout_for_noise(self, signature: np.ndarray) -> LayoutChoice:
        """A noise point's layout: a sort on its best single column (the highest share;
        with no savings at all, the column of highest overall contribution)."""
        self._check_fitted()
        s = np.clip(np.asarray(signature, dtype=np.float64), 0.0, None)
        norm = np.linalg.norm(s)
        i = int(np.argmax(s)) if norm > 0 else int(np.argmax(self.contributions_))
        sim = float(s[i] / norm) if norm > 0 else 0.0
        return LayoutChoice("sort", (self.columns_[i],), f"e:{self.columns_[i]}", sim)

    def layouts(self, signatures: np.ndarray | None = None) -> list[LayoutChoice]:
        """Each fitted row's layout: its cluster's, or the noise fallback."""
        self._check_fitted()
        if signatures is None:
            raise InvalidParameterError("pass the signatures given to fit() (noise rows need them)")
        x = savings_signatures(signatures)
        return [self.cluster_layouts_[int(lab)] if lab >= 0 else self.layout_for_noise(x[i])
                for i, lab in enumerate(self.labels_)]

    def _check_fitted(self) -> None:
        if not hasattr(self, "labels_"):
            raise NotFittedError("this SavingsClusterer is not fitted; call fit() first")


def projection_2d(signatures: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """PCA of the signatures to 2-D: the points and a function projecting more (e.g. anchors)."""
    x = savings_signatures(signatures)
    n, d = x.shape
    if n < 2 or d < 1 or np.allclose(x, x[0]):
        mean = x.mean(axis=0) if n else np.zeros(d)

        def flat(y: np.ndarray) -> np.ndarray:
            y = np.asarray(y, dtype=np.float64)
            out = np.zeros((len(y), 2))
            if d:
                out[:, 0] = (y - mean) @ (np.eye(d)[0])
            return out

        return flat(x), flat
    from sklearn.decomposition import PCA  # scikit-learn: costly import, deferred

    pca = PCA(n_components=min(2, d), svd_solver="full").fit(x)

    def project(y: np.ndarray) -> np.ndarray:
        p = pca.transform(np.asarray(y, dtype=np.float64))
        return np.pad(p, ((0, 0), (0, 2 - p.shape[1])))

    return project(x), project


def project_2d(signatures: np.ndarray) -> np.ndarray:
    """The 2-D view the dashboard draws: PCA of the unit signatures, ``[n, 2]``."""
    return projection_2d(signatures)[0]
