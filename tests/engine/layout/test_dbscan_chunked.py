"""Weighted DBSCAN a chunk of neighbourhoods at a time (engine.layout.signatures) against
scikit-learn's, which holds every neighbour list at once (n^2 of them in one dense cluster)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import DBSCAN

from engine.layout import signatures
from engine.layout.signatures import dbscan_chunked, dbscan_cosine, savings_signatures


def components(labels: np.ndarray) -> list[frozenset[int]]:
    """The clusters as sets of rows (numbering aside)."""
    return sorted((frozenset(np.flatnonzero(labels == k).tolist()) for k in set(labels.tolist()) if k >= 0),
                  key=min)


@pytest.mark.parametrize("chunk_bytes", [8, 800, 64 * 1024 * 1024])
@pytest.mark.parametrize("seed", range(10))
def test_core_points_and_clusters_equal_scikit_learns(monkeypatch, chunk_bytes, seed):
    monkeypatch.setattr(signatures, "NEIGHBOUR_BYTES", chunk_bytes)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    centers = rng.uniform(0, 1, (4, 3))
    x = centers[rng.integers(0, 4, n)] + rng.normal(0, 0.03, (n, 3))
    x[: n // 3] = x[0]  # a dense clump, as merged signatures make
    w = rng.integers(1, 4, n).astype(np.float64)
    eps, min_samples = float(rng.choice([0.02, 0.05, 0.1])), int(rng.integers(2, 9))
    model = DBSCAN(eps=eps, min_samples=min_samples, algorithm="kd_tree").fit(x, sample_weight=w)
    labels, core = dbscan_chunked(x, eps, min_samples, w)
    assert core.tolist() == model.core_sample_indices_.tolist()
    core_mask = np.zeros(n, dtype=bool)
    core_mask[core] = True
    assert components(np.where(core_mask, labels, -1)) == components(np.where(core_mask, model.labels_, -1))
    assert (labels >= 0).tolist() == (model.labels_ >= 0).tolist()  # border points reached, noise not


def test_labels_stay_scikit_learns_with_tiny_chunks(monkeypatch):
    monkeypatch.setattr(signatures, "NEIGHBOUR_BYTES", 64)
    rng = np.random.default_rng(4)
    x = savings_signatures(rng.random((300, 4)) ** 4)
    x[:100] = x[0]
    want = DBSCAN(eps=0.05, min_samples=5, metric="cosine").fit(x).labels_
    assert dbscan_cosine(x, 0.05, 5).tolist() == want.tolist()
