"""The feature vector of a layout, exactly as Figure 4 (PTO section 3.3.1).

x = [TFS, RGS] ++ partition vector ++ sort vector, where the sort vector is
[strategy (0 binpack, 1 major-minor sort, 2 Z-order), table cardinality,
avgDistClustSize(S), #UnionQueries, avg / min / max / median selectivity of the fragments
using any column of S, a one-hot of the column types AVG-pooled over S] and the
partition vector is the same without the strategy. The one-hot has T dimensions, T =
the number of distinct types in the table's schema, so x has 17 + 2T dimensions.
BIN-PACKING and NULL (no partitioning) are all zeros (our reading).

Example:
>>> import numpy as np
>>> from engine.design.pto.candidates import BINPACK, Layout
>>> from engine.design.pto.stats import WorkloadStats
>>> f = Featurizer(WorkloadStats([], {}, {}, {}), {"a": "int", "b": "date"}, 1000, {})
>>> x = f.vector(Layout(None, BINPACK, 64, 32))
>>> len(x) == 17 + 2 * 2, x[:2].tolist(), bool((x[2:] == 0).all())
(True, [64.0, 32.0], True)
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from engine.design.pto.candidates import Layout
from engine.design.pto.stats import WorkloadStats

STRATEGY = {"binpack": 0.0, "sort": 1.0, "zorder": 2.0}


class Featurizer:
    """Feature vectors of one table's layouts (one model per table)."""

    def __init__(self, stats: WorkloadStats, types: Mapping[str, str], n_table: int,
                 clust_sizes: Mapping[tuple[str, ...], float],
                 counts: Callable[[Layout], tuple[int, int]] | None = None) -> None:
        self.stats = stats
        #: ours (``PtoConfig.size_features``): two more dimensions, the files and row groups
        #: the layout writes (:func:`engine.design.pto.labels.written_counts`); None: Fig. 4
        self.counts = counts
        self.type_names = sorted(set(types.values()))
        self.types = dict(types)
        self.n_table = n_table
        self.clust_sizes = dict(clust_sizes)

    @property
    def n_features(self) -> int:
        return 17 + 2 * len(self.type_names) + (2 if self.counts else 0)

    def column_set_vector(self, columns: Sequence[str]) -> np.ndarray:
        """[cardinality, avgDistClustSize, #UnionQueries, avg/min/max/median sel, one-hot]."""
        t = len(self.type_names)
        if not columns:
            return np.zeros(7 + t)
        u = self.stats.union(columns)
        onehot = np.zeros(t)
        for c in columns:
            onehot[self.type_names.index(self.types[c])] += 1.0 / len(columns)
        head = [float(self.n_table), float(self.clust_sizes.get(tuple(columns), 0.0)),
                float(u.n_queries), u.avg_sel, u.min_sel, u.max_sel, u.median_sel]
        return np.concatenate([head, onehot])

    def vector(self, layout: Layout) -> np.ndarray:
        part = self.column_set_vector([layout.partition] if layout.partition else [])
        sort = layout.sort
        svec = self.column_set_vector(sort.columns if sort.kind != "binpack" else [])
        strategy = STRATEGY[sort.kind] if sort.kind != "binpack" else 0.0
        extra = [float(v) for v in self.counts(layout)] if self.counts else []
        return np.concatenate([[float(layout.tfs_bytes), float(layout.rgs_bytes)], part,
                               [strategy], svec, extra])

    def matrix(self, layouts: Sequence[Layout]) -> np.ndarray:
        return np.vstack([self.vector(x) for x in layouts]) if layouts else np.zeros((0, self.n_features))
