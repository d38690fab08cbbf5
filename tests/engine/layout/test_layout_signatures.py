"""Savings signatures -> DBSCAN (cosine as euclidean on a kd-tree) -> anchors -> layouts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score

from engine.core.errors import InvalidParameterError
from engine.layout.base import NotFittedError
from engine.layout.signatures import (
    SavingsClusterer,
    dbscan_cosine,
    project_2d,
    projection_2d,
    savings_signatures,
)

COLS = ["l_shipdate", "l_commitdate", "l_receiptdate", "l_quantity", "l_discount", "l_partkey", "l_suppkey"]


def _jitter(center, n, rng, scale=0.01):
    c = np.asarray(center, dtype=float)
    return np.abs(c + rng.normal(0, scale, (n, len(c))) * (c > 0))


def test_pure_blend_and_diffuse_clusters_get_sort_hilbert_and_qdtree():
    rng = np.random.default_rng(0)
    pure = _jitter([5, 0, 0, 0, 0, 0, 0], 40, rng)  # all of the saving from l_shipdate
    blend = _jitter([0, 3, 3, 0, 0, 0, 0], 30, rng)  # 50/50 commitdate / receiptdate
    diffuse = _jitter([0, 1, 1, 1, 1, 1, 1], 25, rng)  # uniform over six columns
    savings = np.vstack([pure, blend, diffuse])
    # overall, receiptdate contributes more than commitdate: the Hilbert order follows that
    contributions = np.array([200.0, 90.0, 95.0, 25.0, 26.0, 27.0, 28.0])
    c = SavingsClusterer(eps=0.02, min_samples=5).fit(savings_signatures(savings), COLS, contributions)
    assert c.labels_.tolist() == [0] * 40 + [1] * 30 + [2] * 25
    assert c.cluster_layouts_[0].kind == "sort" and c.cluster_layouts_[0].columns == ("l_shipdate",)
    assert c.cluster_layouts_[0].anchor == "e:l_shipdate" and c.cluster_layouts_[0].similarity > 0.99
    assert c.cluster_layouts_[1].kind == "hilbert"
    assert c.cluster_layouts_[1].columns == ("l_receiptdate", "l_commitdate")
    assert c.cluster_layouts_[1].anchor == "v:l_commitdate+l_receiptdate"
    q = c.cluster_layouts_[2]
    assert q.kind == "qdtree" and q.anchor.startswith("diffuse")
    assert q.columns == ("l_receiptdate", "l_commitdate", "l_suppkey", "l_partkey", "l_discount", "l_quantity")
    assert q.similarity == pytest.approx(math.sqrt(3 / 6), abs=0.02)


@pytest.mark.parametrize("weights,kind,columns", [
    ([1, 0, 0, 0], "sort", ("a",)),
    ([0.8, 0.2, 0, 0], "sort", ("a",)),  # e_a: 0.970 > v_ab: 0.857
    ([2, 1, 0, 0], "hilbert", ("a", "b")),  # the WAIR period-6 2:1 mix: v_ab 0.949 > e_a 0.894
    ([1, 1, 1, 0], "hilbert", ("a", "b", "c")),
    ([1, 1, 1, 1], "qdtree", ("a", "b", "c", "d")),  # 4 effective columns (similarity 0.87)
    ([0.5, 0.3, 0.1, 0.1], "hilbert", ("a", "b")),  # effective 2.8 columns, nearest v_ab 0.94
], ids=["pure", "mostly-a", "two-to-one", "three", "four-uniform", "skewed"])
def test_anchor_rule_on_single_directions(weights, kind, columns):
    c = SavingsClusterer().fit(np.eye(4), ["a", "b", "c", "d"], contributions=[4, 3, 2, 1])
    choice = c.choose(np.array(weights, dtype=float))
    assert (choice.kind, choice.columns) == (kind, columns)


def test_thresholds_are_parameters():
    base = np.array([1.0, 1.0, 1.0, 1.0])
    c = SavingsClusterer(diffuse_min_columns=5, min_similarity=0.5).fit(np.eye(4), list("abcd"))
    assert c.choose(base).kind == "hilbert"  # 4 columns no longer count as diffuse
    c = SavingsClusterer(max_blend=2).fit(np.eye(4), list("abcd"))
    assert c.choose(np.array([1.0, 1.0, 1.0, 0.0])).kind == "hilbert"  # v_ab: sqrt(2/3) = 0.816 >= 0.8
    c = SavingsClusterer(max_blend=2, min_similarity=0.85).fit(np.eye(4), list("abcd"))
    assert c.choose(np.array([1.0, 1.0, 1.0, 0.0])).kind == "qdtree"
    c = SavingsClusterer(max_blend=2, min_similarity=0.8, diffuse_min_columns=4).fit(np.eye(4), list("abcd"))
    assert c.choose(np.array([1.0, 1.0, 0.1, 0.0])).kind == "hilbert"


def test_noise_points_fall_back_to_their_best_single_column():
    rng = np.random.default_rng(1)
    savings = np.vstack([_jitter([1, 0, 0], 20, rng), [[0.2, 0.1, 0.9]], [[0.0, 0.0, 0.0]]])
    c = SavingsClusterer(eps=0.01, min_samples=4).fit(savings, ["x", "y", "z"])
    assert c.labels_[-2] == -1 and c.labels_[-1] == -1  # isolated, and no savings at all
    assert (c.labels_[:20] == 0).all()
    noise = c.layout_for_noise(savings_signatures(savings)[-2])
    assert (noise.kind, noise.columns) == ("sort", ("z",))
    assert noise.similarity == pytest.approx(0.9 / math.sqrt(0.86))
    layouts = c.layouts(savings)
    assert layouts[0].columns == ("x",) and layouts[-2].columns == ("z",)
    assert layouts[-1].columns == ("x",)  # no savings: the column of largest overall contribution


def test_anchor_set():
    sig = savings_signatures(np.array([[1.0, 1, 1, 1, 0]]))
    c = SavingsClusterer(max_blend=3, min_samples=1).fit(sig, list("abcde"))
    names = [a.name for a in c.anchors_]
    assert names[:5] == ["e:a", "e:b", "e:c", "e:d", "e:e"]
    # blends only over columns with savings: C(4,2) + C(4,3)
    assert len(names) == 5 + 6 + 4 and "v:a+b+c" in names and not any("e" in n[2:] for n in names[5:])
    for a in c.anchors_:
        assert np.linalg.norm(a.vector) == pytest.approx(1.0)


def _unit(rng, n, d):
    return savings_signatures(rng.random((n, d)) ** 4)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 300), st.integers(2, 6),
       st.sampled_from([0.005, 0.02, 0.05, 0.1]), st.integers(2, 6))
def test_kdtree_labels_equal_sklearn_cosine_labels(seed, n, d, eps, min_samples):
    rng = np.random.default_rng(seed)
    x = _unit(rng, n, d)
    x[: n // 5] = x[0]  # many identical signatures, as real windows produce
    want = DBSCAN(eps=eps, min_samples=min_samples, metric="cosine").fit(x).labels_
    got = dbscan_cosine(x, eps, min_samples)
    assert got.tolist() == want.tolist()


def test_bounded_path_for_many_distinct_signatures_finds_the_clusters():
    rng = np.random.default_rng(2)
    centers = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 1, 1, 1]], dtype=float)
    truth = rng.integers(0, 4, 6000)
    x = savings_signatures(np.abs(centers[truth] + rng.normal(0, 0.02, (6000, 4))))
    exact = dbscan_cosine(x, 0.02, 5)
    snapped = dbscan_cosine(x, 0.02, 5, exact_max_points=2000, grid_ratio=20)
    sampled = dbscan_cosine(x, 0.02, 5, exact_max_points=300, grid_ratio=1000)
    assert adjusted_rand_score(truth, exact) == 1.0 and (exact >= 0).all()
    assert adjusted_rand_score(truth, snapped) == 1.0
    assert adjusted_rand_score(truth, sampled) > 0.97


def test_savings_signatures():
    s = savings_signatures(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [-1e-12, 2.0, 0.0]]))
    assert s.tolist() == [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.raises(InvalidParameterError, match="NaN"):
        savings_signatures(np.array([[np.nan, 1.0]]))
    with pytest.raises(InvalidParameterError, match="2-D"):
        savings_signatures(np.array([1.0, 2.0]))


def test_clusterer_user_errors():
    with pytest.raises(InvalidParameterError, match="2 names"):
        SavingsClusterer().fit(np.eye(3), ["a", "b"])
    with pytest.raises(InvalidParameterError, match="eps"):
        SavingsClusterer(eps=0).fit(np.eye(2), ["a", "b"])
    with pytest.raises(InvalidParameterError, match="contributions"):
        SavingsClusterer().fit(np.eye(2), ["a", "b"], contributions=[1.0])
    with pytest.raises(NotFittedError):
        SavingsClusterer().layout_for_noise(np.array([1.0, 0.0]))


def test_project_2d():
    rng = np.random.default_rng(3)
    x = _unit(rng, 50, 5)
    p = project_2d(x)
    assert p.shape == (50, 2)
    # PCA: the first axis carries at least as much variance as the second
    assert p[:, 0].var() >= p[:, 1].var() > 0
    pts, project = projection_2d(x)
    assert np.allclose(project(x), pts)
    assert project(np.eye(5)).shape == (5, 2)  # anchors drawn in the same view
    assert project_2d(np.zeros((0, 3))).shape == (0, 2)
    assert project_2d(np.ones((1, 3))).shape == (1, 2)
    assert project_2d(np.ones((4, 3))).tolist() == [[0.0, 0.0]] * 4
    assert project_2d(np.array([[1.0], [2.0]])).shape == (2, 2)
