"""PAW properties, by hypothesis on random data and workloads."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings, strategies as st

from engine.design.paw import DBox, PawTree
from engine.layout.qdtree import QdTree


def _case(seed: int, n: int = 600, m: int = 6, d: int = 2):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 50, size=(n, d)).astype(float)
    data = {f"c{j}": x[:, j] for j in range(d)}
    queries = []
    for _ in range(m):
        lo = rng.integers(0, 45, size=d)
        hi = lo + rng.integers(0, 15, size=d)
        queries.append({f"c{j}": (float(lo[j]), float(hi[j])) for j in range(d)})
    return rng, data, queries


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), psi=st.sampled_from(["text", "printed"]),
       delta=st.sampled_from([0.0, 0.02, 0.05]), b_min=st.sampled_from([20, 40, 70]))
@example(seed=292, psi="text", delta=0.05, b_min=40)  # a GP′ side rounding past a row at 0
@example(seed=296, psi="text", delta=0.02, b_min=20)
def test_lemma1_bound_and_exactly_one_leaf(seed, psi, delta, b_min):
    rng, data, queries = _case(seed)
    t = PawTree(b_min=b_min, delta=delta, psi=psi, alpha=3).fit(data, queries)
    leaf = t.leaf_of(data)
    counts = np.bincount(leaf, minlength=t.n_leaves_)
    assert (leaf >= 0).all() and len(leaf) == len(data["c0"])
    assert counts.tolist() == [lf.rows for lf in t.leaves_]
    assert all(lf.rows >= b_min for lf in t.leaves_)
    length = 49.0  # domain length of both dimensions (values 0..49)
    for q, qs in zip(queries, t.extended_):
        # every δ-close query reads at most what q* reads (Lemma 1)
        for _ in range(5):
            qp = {}
            for c, (lo, hi) in q.items():
                a, b = lo + rng.uniform(-delta, delta) * length, hi + rng.uniform(-delta, delta) * length
                qp[c] = (min(a, b), max(a, b))
            assert t.query_cost(qp) <= t.query_cost(qs)
        # and the router finds every row the query holds
        x = np.column_stack([data["c0"], data["c1"]])
        inside = DBox.from_bounds(q, t.columns).contains(x)
        assert set(leaf[inside].tolist()) <= set(t.leaves_for(q).tolist())


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), b_min=st.sampled_from([15, 30, 60]))
def test_axis_only_without_medians_equals_the_qdtree(seed, b_min):
    _, data, queries = _case(seed)
    t = PawTree(b_min=b_min, delta=0.0, psi="axis", medians=False, columns=("c0", "c1")).fit(data, queries)
    qd = QdTree(min_leaf_rows=b_min, columns=("c0", "c1")).fit(data, queries)
    assert np.array_equal(t.leaf_of(data), qd.leaf_of(data))
    assert [lf.rows for lf in t.leaves_] == [lf.rows for lf in qd.leaves_]
    for lf, ql in zip(t.leaves_, qd.leaves_):
        ours = t.leaf_boxes()[lf.id]
        for c in ("c0", "c1"):
            lo, hi, lo_inc, hi_inc = ql.box.get(c, (None, None, True, True))
            assert ours[c][:2] == [lo, hi]
            if lo is not None:
                assert ours[c][2] == lo_inc
            if hi is not None:
                assert ours[c][3] == hi_inc


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), b_min=st.sampled_from([10, 25]))
def test_kd_refinement_bounds_rectangular_leaves(seed, b_min):
    _, data, queries = _case(seed, n=800)
    t = PawTree(b_min=b_min, delta=0.01, refine=True).fit(data, queries)
    x = np.column_stack([data["c0"], data["c1"]])
    leaf = t.leaf_of(data)
    for lf in t.leaves_:
        assert lf.rows >= b_min
        if lf.irregular or lf.rows < 2 * b_min:
            continue
        rows = x[leaf == lf.id]  # too big: no median cut on any dimension leaves b_min a side
        for j in range(2):
            v = np.sort(rows[:, j])[len(rows) // 2]
            n_left = int((rows[:, j] < v).sum())
            assert n_left < b_min or len(rows) - n_left < b_min


def _random_box(draw_ints, flags) -> DBox:
    lo = np.minimum(draw_ints[:2], draw_ints[2:])
    hi = np.maximum(draw_ints[:2], draw_ints[2:])
    return DBox(lo.astype(float), hi.astype(float), np.array(flags[:2]), np.array(flags[2:]))


_ints = st.lists(st.integers(0, 6), min_size=4, max_size=4).map(np.array)
_flags = st.lists(st.booleans(), min_size=4, max_size=4)


@settings(max_examples=200, deadline=None)
@given(a=_ints, af=_flags, b=_ints, bf=_flags, c=_ints, cf=_flags)
def test_box_subtraction_and_coverage_are_exact(a, af, b, bf, c, cf):
    """The IP router's test (exact box subtraction with inclusive and
    exclusive bounds) against brute force on every point of a half-unit grid, which tells
    open from closed ends of integer bounds."""
    from engine.design.paw.boxes import covered

    A, B, C = _random_box(a, af), _random_box(b, bf), _random_box(c, cf)
    g = np.arange(-0.5, 7.0, 0.5)
    pts = np.array(np.meshgrid(g, g, indexing="ij")).reshape(2, -1).T
    pieces = A.subtract(B)
    assert len(pieces) <= 4
    inside = np.array([p.contains(pts) for p in pieces] or np.zeros((0, len(pts)), bool))
    assert (inside.sum(axis=0) <= 1).all()  # disjoint
    assert np.array_equal(inside.any(axis=0), A.contains(pts) & ~B.contains(pts))  # exactly A − B
    truth = not (A.contains(pts) & ~B.contains(pts) & ~C.contains(pts)).any()
    assert covered(A, [B, C]) == truth
