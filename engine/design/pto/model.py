"""The prediction model and the choice (PTO section 3.3, ``PAW_PTO.md`` section 2).

One model per table: scikit-learn ``GradientBoostingRegressor(random_state=0)`` with its
defaults (``min_samples_leaf=1``) fitted on the 12 labelled training layouts.
``HistGradientBoostingRegressor`` with defaults is not used: its ``min_samples_leaf=20``
exceeds 12 rows, so it predicts one constant for every layout.

Choice: argmax over all candidates of (the measured label if labelled, else the
prediction); ties go to the larger TFS, then the larger RGS (fewer files, smaller footers).

Example:
>>> import numpy as np
>>> X = np.arange(24.0).reshape(12, 2); y = np.r_[np.zeros(6), np.ones(6)]
>>> len(set(fit(X, y).predict(X).round(6))) > 1
True
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from engine.design.pto.candidates import Layout


def fit(X: np.ndarray, y: np.ndarray, seed: int = 0):
    """A fitted ``GradientBoostingRegressor`` (sklearn's import cost: imported on use)."""
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(random_state=seed).fit(X, y)


def choose(layouts: Sequence[Layout], scores: Sequence[float]) -> int:
    """Index of the best layout: highest score, then larger TFS, then larger RGS.

    Example:
    >>> from engine.design.pto.candidates import BINPACK
    >>> choose([Layout(None, BINPACK, 32, 8), Layout(None, BINPACK, 64, 8),
    ...         Layout(None, BINPACK, 64, 16)], [1.0, 1.0, 0.5])
    1
    """
    return min(range(len(layouts)), key=lambda i: rank_key(layouts[i], scores[i]))


def rank_key(layout: Layout, score: float) -> tuple[float, int, int]:
    """Sort key putting the best layout first (the tie rules of the choice)."""
    return -round(float(score), 9), -layout.tfs_bytes, -layout.rgs_bytes
