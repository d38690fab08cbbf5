"""The prediction model and the choice (PTO section 3.3).

One model per table: scikit-learn ``GradientBoostingRegressor(random_state=0)`` with its
defaults (``min_samples_leaf=1``) fitted on the 12 labelled training layouts.
``HistGradientBoostingRegressor`` with defaults is not used: its ``min_samples_leaf=20``
exceeds 12 rows, so it predicts one constant for every layout.

Choice: argmax over all candidates of (the measured label if labelled, else the
prediction); ties go to the larger TFS, then the larger RGS (fewer files, smaller footers).
A tie is judged at ``tol``: scores within ``tol`` of the best are tied (:func:`choose`).
The optimizer passes the model's own fitting residual on its training rows (ours):
boosting reproduces a training label only up to
0.9^100 x its distance from the mean (``learning_rate`` 0.1, 100 trees), so a prediction the
trees cannot tell from a measured label (same leaves) lost or won a 1e-9 tie by that
residue, not by the tie rule (bench/pto/README.md).

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


def choose(layouts: Sequence[Layout], scores: Sequence[float], tol: float = 0.0) -> int:
    """Index of the best layout: highest score, then larger TFS, then larger RGS; scores
    within ``tol`` of the highest are tied.

    Example:
    >>> from engine.design.pto.candidates import BINPACK
    >>> lays = [Layout(None, BINPACK, 32, 8), Layout(None, BINPACK, 64, 8), Layout(None, BINPACK, 64, 16)]
    >>> choose(lays, [1.0, 1.0, 0.5]), choose(lays, [1.0, 1.0, 0.99]), choose(lays, [1.0, 1.0, 0.99], tol=0.01)
    (1, 1, 2)
    """
    best = max(round(float(s), 9) for s in scores)
    tied = [i for i in range(len(layouts)) if round(float(scores[i]), 9) >= best - tol - 1e-9]
    return min(tied, key=lambda i: (-layouts[i].tfs_bytes, -layouts[i].rgs_bytes, -float(scores[i])))


def fit_residual(fitted, X: np.ndarray, y: np.ndarray) -> float:
    """The largest |prediction - label| over the training rows: the model's resolution."""
    return float(np.max(np.abs(fitted.predict(X) - y))) if len(y) else 0.0


def rank_key(layout: Layout, score: float) -> tuple[float, int, int]:
    """Sort key putting the best layout first (the tie rules of the choice)."""
    return -round(float(score), 9), -layout.tfs_bytes, -layout.rgs_bytes
