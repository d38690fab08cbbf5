"""Where a run of ordered rows is cut into files or row groups: one rule for every layer.

The executor cuts a group's ordered rows into files of at most ``target_rows`` rows;
the simulator (:mod:`engine.sim.table`) and PTO's in-memory labels
(:mod:`engine.design.pto.labels`, Algorithm 3) must cut the same way, or their predicted
files and row groups would not be the ones the executor writes. Both sit above
:mod:`engine.layout` in the layers, so the rule lives here.
"""

from __future__ import annotations

import math

import numpy as np


def cut_points(n_rows: int, target_rows: int, at_least_target: bool = False) -> np.ndarray:
    """Start offsets of ``ceil(n / target)`` near-equal chunks of ``n`` ordered rows
    (``floor(n / target)`` chunks, each at least the target, with ``at_least_target``).

    Example:
    >>> cut_points(10, 4).tolist()
    [0, 3, 6]
    >>> cut_points(10, 4, at_least_target=True).tolist()
    [0, 5]
    >>> cut_points(0, 4).tolist()
    []
    """
    if n_rows <= 0:
        return np.zeros(0, dtype=np.int64)
    t = max(1, target_rows)
    k = max(1, n_rows // t if at_least_target else math.ceil(n_rows / t))
    return (np.arange(k, dtype=np.int64) * n_rows) // k
