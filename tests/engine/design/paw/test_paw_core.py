"""PAW core: the hand-checked 100x100 grid cases."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.errors import InvalidParameterError
from engine.design.paw import DBox, PawTree, dist_box, estimate_delta, min_similar_delta, multi_group_split
from engine.design.paw.similarity import nearest_delta

B_MIN = 100
REGION = DBox.closed([0, 0], [99, 99])
DOMAIN = (np.zeros(2), np.full(2, 100.0))


def grid() -> np.ndarray:
    g = np.meshgrid(np.arange(100.0), np.arange(100.0), indexing="ij")
    return np.stack(g, -1).reshape(-1, 2)


def grid_data() -> dict[str, np.ndarray]:
    g = grid()
    return {"x": g[:, 0], "y": g[:, 1]}


Q1, Q2, Q3 = DBox.closed([10, 10], [19, 19]), DBox.closed([50, 50], [59, 59]), DBox.closed([80, 10], [84, 19])
Q4 = DBox.closed([86, 10], [88, 19])


def box(lo, hi) -> dict:
    return {"x": (lo[0], hi[0]), "y": (lo[1], hi[1])}


def test_def1_box_distance():
    assert dist_box(DBox.closed([0, 5], [10, 8]), DBox.closed([1, 5], [12, 9])) == 2.0
    # normalised by the domain length: 2 / 100
    assert dist_box(DBox.closed([0, 5], [10, 8]), DBox.closed([1, 5], [12, 9]), DOMAIN) == pytest.approx(0.02)


def test_delta_prime_examples():
    h1 = [DBox.closed([0, 0], [10, 10]), DBox.closed([50, 50], [60, 60])]
    h2 = [DBox.closed([52, 49], [61, 60]), DBox.closed([1, 0], [12, 9])]
    assert min_similar_delta(h1, h2) == 2.0
    assert min_similar_delta(h1, h2, DOMAIN) == pytest.approx(0.02)
    assert estimate_delta(h1 + h2, DOMAIN) == pytest.approx(0.02)
    far = [DBox.closed([0, 0], [10, 10]), DBox.closed([90, 90], [100, 100])]
    assert min_similar_delta(h1, far) == 40.0


def test_delta_prime_drops_the_oldest_query_when_odd():
    h = [DBox.closed([70, 70], [71, 71]), DBox.closed([0, 0], [10, 10]), DBox.closed([0, 0], [13, 10])]
    assert estimate_delta(h) == 3.0


def test_multi_group_split_sizes_and_cost():
    g = multi_group_split(grid(), REGION, [Q1, Q2, Q3], B_MIN, np.full(2, 99.0))
    assert g is not None
    assert g.sizes == [100, 100, 112]
    assert int(g.ip.sum()) == 9_688
    assert g.cost == 312
    gp3 = g.boxes[2]
    assert np.round(gp3.lo, 2).tolist() == [78.67, 7.0] and np.round(gp3.hi, 2).tolist() == [85.33, 22.0]
    # q3 = c ± r with c = (82, 14.5), r = (2, 4.5): f* = 5/3 on both axes
    assert (gp3.hi - gp3.lo) / 2 / np.array([2.0, 4.5]) == pytest.approx([5 / 3, 5 / 3])
    # the unsplit region: every query reads all 10,000 rows (Cost(P_o, Q) = 3 x 10,000)
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    assert PawTree(b_min=B_MIN, delta=0.0, psi="none").fit(grid_data(), queries).cost(queries) == 30_000


def test_overlapping_expansion_fails_and_alg3_falls_back_to_alg2():
    assert multi_group_split(grid(), REGION, [Q1, Q2, Q3, Q4], B_MIN, np.full(2, 99.0)) is None
    g4 = multi_group_split(grid(), REGION, [Q4], B_MIN, np.full(2, 99.0))
    assert np.round(g4.boxes[0].lo[0], 2) == 84.89 and np.round(g4.boxes[0].hi[0], 2) == 89.11
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3, Q4)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    assert t.nodes_[0].kind == "axis"  # Alg. 1 returned ∅ at the root, Alg. 2 split it
    assert all(lf.rows >= B_MIN for lf in t.leaves_)


def test_alg1_merges_intersecting_boxes_to_a_fixpoint():
    """Step 2: C meets neither A nor B, only their MBR, so it joins on the second pass; D stays."""
    from engine.design.paw.group_split import merge_groups

    a, b = DBox.closed([0, 0], [1, 1]), DBox.closed([1, 1], [4, 4])
    c, d = DBox.closed([3, 0], [5, 0.5]), DBox.closed([8, 8], [9, 9])
    groups = merge_groups([c, a, b, d])
    assert [(g.lo.tolist(), g.hi.tolist(), sorted(m)) for g, m in groups] == \
        [([0.0, 0.0], [5.0, 4.0], [0, 1, 2]), ([8.0, 8.0], [9.0, 9.0], [3])]


def test_alg1_fails_when_the_irregular_partition_is_below_b_min():
    """Alg. 1 step 5: a group holding all but the top row (9,900 rows) leaves an IP of 100 rows."""
    q = DBox.closed([0, 0], [99, 98])
    assert multi_group_split(grid(), REGION, [q], 100, np.full(2, 99.0)).sizes == [9_900]
    assert multi_group_split(grid(), REGION, [q], 101, np.full(2, 99.0)) is None


def test_alg1_expands_a_point_predicate_along_its_other_dimensions():
    """r_d = 0 (x = 50) uses ε·domain: the expansion grows y only, to exactly
    the 100 points of the column x = 50 (f* = (99 − 14.5) / 4.5, the farthest y)."""
    g = multi_group_split(grid(), REGION, [DBox.closed([50, 10], [50, 19])], B_MIN, np.full(2, 99.0))
    assert g.sizes == [100] and int(g.ip.sum()) == 9_900
    gp = g.boxes[0]
    assert gp.lo[0] == pytest.approx(50.0, abs=1e-4) and gp.hi[0] == pytest.approx(50.0, abs=1e-4)
    assert (gp.lo[1], gp.hi[1]) == (0.0, 99.0)  # clipped to the region


def test_irregular_partitions_are_not_refined():
    """Decision 5: with the k-d refinement on, the IP (9,688 rows, > 2·b_min) stays one leaf;
    the groups (100 / 100 / 112 rows, < 2·b_min) stay too."""
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed", refine=True).fit(grid_data(), queries)
    assert sorted((lf.irregular, lf.rows) for lf in t.leaves_) == [(False, 100), (False, 100), (False, 112),
                                                                  (True, 9_688)]


def test_alg3_printed_psi_takes_the_group_split_at_the_root():
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    assert t.nodes_[0].kind == "group"
    assert sorted(lf.rows for lf in t.leaves_) == [100, 100, 112, 9_688]
    assert t.cost(queries) == 312


def test_overfitting_demo():
    """A future query two cells off q1 reads GP1 + IP (9,788) with δ = 0, but 196 with δ = 2."""
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    future = box([12, 10], [21, 19])
    t0 = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    assert t0.query_cost(future) == 9_788
    t2 = PawTree(b_min=B_MIN, delta=2 / 99, psi="printed").fit(grid_data(), queries)
    assert t2.query_cost(box([8, 8], [21, 21])) == 196
    assert t2.query_cost(future) == 196


def test_ip_is_reached_only_outside_the_groups():
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    ip = next(lf.id for lf in t.leaves_ if lf.irregular)
    assert ip not in t.leaves_for(box([11, 11], [18, 18]))
    assert ip in t.leaves_for(box([30, 30], [31, 31]))
    # q1 spans y 10..19 only, so a y-open query over x 10..19 also reads the IP
    assert ip in t.leaves_for({"x": (10.0, 19.0)})


def test_rows_outside_the_fitted_domain_route_and_are_found():
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    new = {"x": np.array([-5.0, 150.0, 15.0]), "y": np.array([15.0, -3.0, 15.0])}
    leaves = t.leaf_of(new)
    assert (leaves >= 0).all()
    for i in range(3):
        q = {"x": (new["x"][i], new["x"][i]), "y": (new["y"][i], new["y"][i])}
        assert leaves[i] in t.leaves_for(q)


def test_text_psi_uses_axis_splits_on_large_partitions():
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    t = PawTree(b_min=B_MIN, delta=0.0).fit(grid_data(), queries)
    assert t.nodes_[0].kind == "axis"
    assert all(lf.rows >= B_MIN for lf in t.leaves_)
    assert t.cost(queries) < 30_000


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameterError, match="psi"):
        PawTree(b_min=10, psi="bogus").fit(grid_data(), [])
    with pytest.raises(InvalidParameterError, match="alpha"):
        PawTree(b_min=10, alpha=1).fit(grid_data(), [])
    with pytest.raises(InvalidParameterError, match="delta"):
        PawTree(b_min=10, delta="x").fit(grid_data(), [])


def test_the_layout_ordering_routes_like_the_tree():
    from engine.layout.base import ordering_from_json
    from engine.layout.paw import PawOrdering

    rng = np.random.default_rng(5)
    data = {"x": rng.integers(0, 100, 5000).astype(float), "y": rng.integers(0, 100, 5000).astype(float)}
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, Q3)]
    for psi in ("printed", "text"):
        t = PawTree(b_min=100, delta=0.01, psi=psi, refine=True).fit(data, queries)
        o = PawOrdering(["x", "y"], tree=t.router_json()).fit(data)
        new = {"x": np.r_[data["x"], [-1.0, 200.0, np.nan]], "y": np.r_[data["y"], [50.0, 15.0, 3.0]]}
        assert np.array_equal(o.keys(new), t.leaf_of(new))
        back = ordering_from_json(o.to_json())
        assert np.array_equal(back.keys(new), o.keys(new))
        assert (back.fine_keys(new) >> 17).tolist() == o.keys(new).tolist()


def test_a_paw_ordering_without_its_tree_is_refused():
    from engine.layout.paw import PawOrdering

    with pytest.raises(InvalidParameterError, match="partition tree"):
        PawOrdering(["x"]).fit({"x": np.arange(3.0)})


def test_delta_similarity_by_matching_with_replicated_history():
    from engine.design.paw import is_delta_similar
    from engine.design.paw.similarity import perturb

    qh = [DBox.closed([0, 0], [10, 10]), DBox.closed([50, 50], [60, 60])]
    qf = [DBox.closed([1, 0], [11, 10]), DBox.closed([0, 1], [10, 11]),
          DBox.closed([49, 50], [60, 61]), DBox.closed([51, 50], [61, 60])]
    assert is_delta_similar(qh, qf, 1.0)  # each history query matched exactly twice
    assert not is_delta_similar(qh, qf, 0.5)
    assert not is_delta_similar(qh, qf[:3], 5.0)  # |Q_F| not a multiple of |Q_H|
    lopsided = qf[:2] + [DBox.closed([1, 1], [11, 11]), DBox.closed([50, 50], [60, 60])]
    assert not is_delta_similar(qh, lopsided, 1.0)  # three near q1: q1 would be used 3 times
    rng = np.random.default_rng(0)
    moved = perturb(qh, 0.03, DOMAIN, rng)
    assert is_delta_similar(qh, moved, 0.03, DOMAIN) and min_similar_delta(qh, moved, DOMAIN) <= 0.03


def test_nearest_delta_departs_from_the_matching_only_when_counts_differ():
    """Two newer queries near the same older one: Def. 2's perfect matching must pair one of
    them with the far query (48), the one-sided nearest distance does not (2)."""
    qh = [DBox.closed([0, 0], [10, 10]), DBox.closed([50, 50], [60, 60])]
    qf = [DBox.closed([1, 1], [11, 11]), DBox.closed([2, 2], [12, 12])]
    assert min_similar_delta(qh, qf, DOMAIN) == pytest.approx(0.48)
    assert nearest_delta(qh, qf, DOMAIN) == pytest.approx(0.02)
    # §5 item 2: one query per cluster on both sides, both readings agree
    h2 = [DBox.closed([52, 49], [61, 60]), DBox.closed([1, 0], [12, 9])]
    assert nearest_delta(qh, h2, DOMAIN) == pytest.approx(min_similar_delta(qh, h2, DOMAIN)) == pytest.approx(0.02)
    # the tree takes either reading by name; the history's halves are qh then qf
    queries = [q.to_bounds(["x", "y"]) for q in qh + qf]
    paper = PawTree(b_min=B_MIN, delta="auto").fit(grid_data(), queries)
    ours = PawTree(b_min=B_MIN, delta="auto-nearest").fit(grid_data(), queries)
    assert paper.delta_ == pytest.approx(48 / 99) and ours.delta_ == pytest.approx(2 / 99)
    with pytest.raises(InvalidParameterError, match="auto-nearest"):
        PawTree(b_min=B_MIN, delta="auto-far").fit(grid_data(), queries)


def test_the_design_pages_tree_drawing_projects_each_box_on_the_two_columns():
    """app.charts.paw_tree: each box's outline on the chosen columns, an open end at the
    domain's, a date column in milliseconds on a date axis (by hand)."""
    from app.charts import paw_tree

    design = {"types": {"x": "float", "d": "date", "z": "float"},
              "domain": {"x": [0.0, 10.0], "d": [0.0, 100.0], "z": [0.0, 1.0]},
              "queries": {"history": [{"x": [1.0, 2.0, True, True], "d": [10.0, 20.0, True, True]}],
                          "extended": [{"x": [0.5, 2.5, True, True], "d": [9.0, 21.0, True, True]}]},
              "leaves": [{"id": 0, "rows": 7, "irregular": False, "box": {"x": [None, 5.0], "d": [None, None]}},
                         {"id": 1, "rows": 9, "irregular": True, "box": {"x": [5.0, None], "z": [0.2, 0.4]}}]}
    fig = paw_tree(design, "x", "d")
    traces = {t.name: t for t in fig.data}
    xs, ys = list(traces["partition"].x), list(traces["partition"].y)
    day = 86_400_000.0
    assert xs[:5] == [0.0, 5.0, 5.0, 0.0, 0.0] and np.isnan(xs[5])
    assert ys[:5] == [0.0, 0.0, 100 * day, 100 * day, 0.0]
    ip = list(traces["irregular partition (region minus its groups)"].x)
    assert ip[:5] == [5.0, 10.0, 10.0, 5.0, 5.0]
    assert list(traces["history query"].y)[:3] == [10 * day, 10 * day, 20 * day]
    assert list(traces["extended query q* (δ)"].x)[:2] == [0.5, 2.5]
    assert list(traces["leaf (hover: rows)"].text) == ["leaf 0: 7 sampled rows", "leaf 1: 9 sampled rows (irregular)"]
    assert fig.layout.yaxis.type == "date" and fig.layout.xaxis.type == "linear"
    one = paw_tree(design, "z", None)  # one column: drawn over the unit interval
    assert list(one.data[-1].y) == [0.5, 0.5]


def test_a_query_outside_the_data_is_priced_at_the_partition_it_reads():
    """Alg. 1 with the router's rule: q3 lies beyond the grid (x 150..160) but inside the root's
    unbounded descriptor. It forms no group, and the router sends it to the IP, so the split
    costs q1 -> GP1 (100) + q2 -> GP2 (100) + q3 -> IP (10,000 − 200 = 9,800) = 10,000 rows,
    not the 200 of the two grouped queries alone."""
    q3 = DBox.closed([150, 10], [160, 19])
    everything = DBox.everything(2)
    g = multi_group_split(grid(), REGION, [Q1, Q2, q3], B_MIN, np.full(2, 99.0), outer=everything)
    assert g.sizes == [100, 100] and int(g.ip.sum()) == 9_800
    assert g.groups == ((0,), (1,))
    assert g.cost == 10_000
    queries = [box(q.lo, q.hi) for q in (Q1, Q2, q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    assert t.nodes_[0].kind == "group"
    assert [t.query_cost(q) for q in queries] == [100, 100, 9_800]
    assert t.cost(queries) == g.cost


def test_a_group_descriptor_reaching_out_of_the_data_is_what_an_outside_query_reads():
    """q2 = x 90..99 touches the grid's right edge, so its GP′ descriptor reaches x = +inf over
    y 10..19; q3 (x 150..160, y 12..15) lies inside it and reads GP2 (100 rows), not the IP."""
    q2, q3 = DBox.closed([90, 10], [99, 19]), DBox.closed([150, 12], [160, 15])
    g = multi_group_split(grid(), REGION, [Q1, q2, q3], B_MIN, np.full(2, 99.0), outer=DBox.everything(2))
    assert g.sizes == [100, 100] and g.cost == 300
    queries = [box(q.lo, q.hi) for q in (Q1, q2, q3)]
    t = PawTree(b_min=B_MIN, delta=0.0, psi="printed").fit(grid_data(), queries)
    assert [t.query_cost(q) for q in queries] == [100, 100, 100]
