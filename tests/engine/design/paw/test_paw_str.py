"""PAW's precise descriptors on disk and in the cost (seed 001 §V-A):
a ``paw`` plan with ``n_mbr`` writes each file's rows in STR order as N row groups whose
footers bound exactly the planned MBRs, and DuckDB prunes those row groups."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from duckdb_helpers import parquet_list_sql as duckdb_files
from duckdb_helpers import profiled_query as duckdb_profiled
from duckdb_helpers import connect as duckdb_connect
from engine import api
from engine.core import logical_types
from engine.design.paw import DBox, PawTree
from engine.design.paw.descriptors import PreciseDescriptors, row_group_cost, str_mbrs
from engine.layout.paw import PawOrdering
from engine.spark.str_rowgroups import str_tiles
from engine.table.store import TableStore
from plan_helpers import rows_of
from security_helpers import sign_in
from test_paw_plan import recurring_workload

TYPES = {"l_shipdate": "date", "l_quantity": "float"}


# -- the cost, a hand-made case ---------------------------------------------
def test_cost_counts_a_partition_only_when_a_query_meets_one_of_its_mbrs():
    """One partition of two clusters (x, y in [0, 10] and [90, 100]); 2 MBRs = the clusters."""
    a = np.array([[x, y] for x in range(0, 11, 2) for y in range(0, 11, 2)], dtype=float)  # 36 rows
    x = np.vstack([a, a + 90.0])  # 72 rows
    data = {"x": x[:, 0], "y": x[:, 1]}
    tree = PawTree(b_min=72, delta=0.0, columns=("x", "y")).fit(data, [])
    p = PreciseDescriptors(tree, data, 2)
    assert [m.to_bounds(["x", "y"]) for m in p.mbrs[0]] == [
        {"x": [0.0, 10.0, True, True], "y": [0.0, 10.0, True, True]},
        {"x": [90.0, 100.0, True, True], "y": [90.0, 100.0, True, True]}]
    gap, corner, both = ({"x": (20.0, 80.0), "y": (0.0, 100.0)}, {"x": (95.0, 99.0), "y": (95.0, 99.0)},
                         {"x": (5.0, 95.0), "y": (5.0, 95.0)})
    assert [tree.query_cost(q) for q in (gap, corner, both)] == [72.0, 72.0, 72.0]  # descriptor: the box
    assert [p.query_cost(q) for q in (gap, corner, both)] == [0.0, 72.0, 72.0]
    # the Qd-tree baseline takes the same plugin (Figs. 23a/25a measure every method)
    from engine.design.paw.baselines import qdtree
    qd = qdtree(data, [{"x": (None, 50.0)}], 36, ("x", "y"))
    assert PreciseDescriptors(qd, data, 1).cost([gap]) == 0.0 and qd.n_leaves_ == 2


def test_physical_check_reads_only_the_row_groups_a_query_meets():
    """Two files; file 0 has row groups [0,1]² and [9,10]², file 1 one row group [20,30]²."""
    lo = np.array([[0.0, 0.0], [9.0, 9.0], [20.0, 20.0]])
    hi = np.array([[1.0, 1.0], [10.0, 10.0], [30.0, 30.0]])
    rows, file_of = np.array([5.0, 5.0, 7.0]), np.array([0, 0, 1])
    assert row_group_cost(lo, hi, rows, file_of, DBox.closed([4, 4], [6, 6])) == (0, 0.0)  # file 0's gap
    assert row_group_cost(lo, hi, rows, file_of, DBox.closed([0.5, 0.5], [9.5, 9.5])) == (1, 10.0)
    assert row_group_cost(lo, hi, rows, file_of, DBox.closed([9.5, 9.5], [25, 25])) == (2, 12.0)


def test_str_tiles_on_ranks_equal_str_on_values():
    rng = np.random.default_rng(4)
    x = np.column_stack([rng.integers(0, 50, 300), rng.normal(size=300)])  # ties on the first column
    t = pa.table({"a": x[:, 0].astype("int64"), "b": x[:, 1]})
    from engine.design.paw.descriptors import str_order
    for n in (1, 3, 5):
        assert [i.tolist() for i in str_tiles(t, ["a", "b"], n)] == [i.tolist() for i in str_order(x, n)]


# -- the executor: STR row groups on disk ----------------------------------------------------
@pytest.fixture
def lineitem_str(settings, spark, tmp_path):
    """4000 rows in 2 files of 2000 (the table's target), 20 recurring 2-D queries."""
    return recurring_workload(settings, tmp_path, target_rows=2000, spark=spark)


def _footer_boxes(path: str, columns: list[str]) -> list[tuple[list[float], list[float], int]]:
    """Each row group's (min per column, max per column, rows), encoded as the design encodes."""
    meta = pq.ParquetFile(path).metadata
    names = [meta.schema.column(j).name for j in range(meta.num_columns)]
    out = []
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        stats = [rg.column(names.index(c)).statistics for c in columns]
        out.append(([logical_types.encode_scalar(TYPES[c], s.min) for c, s in zip(columns, stats)],
                    [logical_types.encode_scalar(TYPES[c], s.max) for c, s in zip(columns, stats)], rg.num_rows))
    return out


def _encoded(path: str, columns: list[str]) -> np.ndarray:
    t = pq.read_table(path, columns=columns)
    return np.column_stack([logical_types.encode_arrow(TYPES[c], t.column(c))[0] for c in columns])


def _row_groups_scanned(con, prof, paths, queries) -> tuple[int, int]:
    """DuckDB's own counters over the queries: (row groups scanned, row groups to scan), read
    as the PTO bench reads them (one helper, ``tests/helpers/duckdb_helpers.py``)."""
    scanned = total = 0
    for lo, hi, qlo, qhi in queries:
        _, _, counters = duckdb_profiled(
            con, f"SELECT count(*) FROM read_parquet({duckdb_files(paths)}) WHERE l_shipdate BETWEEN "
                 f"DATE '{lo}' AND DATE '{hi}' AND l_quantity BETWEEN {qlo} AND {qhi}", prof)
        scanned += counters["row_groups"]
        total += counters["row_groups_total"]
    return scanned, total


def test_paw_plan_with_n_mbr_writes_str_row_groups_that_duckdb_prunes(settings, spark, lineitem_str, tmp_path):
    before, queries = lineitem_str
    plan = api.create_plan(settings, "lineitem", "paw", {"delta": "0.01", "b_min_rows": 250, "n_mbr": 3},
                           created_by=sign_in(settings, "carol"))
    (group,) = plan.groups
    assert group["layout_params"]["n_mbr"] == 3 and plan.params["n_mbr"] == 3
    costs = group["layout_params"]["design"]["costs"]
    assert costs["paw_precise"]["worst_future"] <= costs["paw"]["worst_future"]
    alice = sign_in(settings, "alice")
    api.approve_plan(settings, plan.id, alice, reason="precise descriptors")
    result = api.run_plan(settings, plan.id, spark=spark, actor=alice)
    assert result["groups"][0]["fit"]["str_row_groups"] == 3
    after = TableStore(settings).current_snapshot("lineitem")
    paths = [p.path for p in after.partitions]
    assert sum(p.rows for p in after.partitions) == 4000  # and the executor checked count + checksum
    assert rows_of(paths).equals(rows_of([p.path for p in before.partitions]))

    # the planned MBRs: each leaf's STR packing on the table's rows (the design sample is the table)
    cols = list(group["columns"])
    ordering = PawOrdering(cols, tree=group["layout_params"]["tree"]).fit({c: np.zeros(1) for c in cols})
    files_of_leaf: dict[int, list[str]] = {}
    for path in paths:
        x = _encoded(path, cols)
        (leaf,) = set(ordering.keys({c: x[:, j] for j, c in enumerate(cols)}).tolist())  # one leaf per file
        files_of_leaf.setdefault(leaf, []).append(path)
        got = _footer_boxes(path, cols)
        want = str_mbrs(x, 3)
        assert len(got) == min(3, len(x))
        assert [(g[0], g[1]) for g in got] == [(m.lo.tolist(), m.hi.tolist()) for m in want], path
        assert sum(g[2] for g in got) == len(x)
    all_x = np.vstack([_encoded(p, cols) for p in paths])
    leaf_all = ordering.keys({c: all_x[:, j] for j, c in enumerate(cols)})
    single = [lf for lf, fs in files_of_leaf.items() if len(fs) == 1]
    assert len(single) >= 4
    for lf in single:  # a leaf held by one file: its row groups ARE the leaf's planned MBRs
        planned = str_mbrs(all_x[leaf_all == lf], 3)
        got = _footer_boxes(files_of_leaf[lf][0], cols)
        assert [(g[0], g[1]) for g in got] == [(m.lo.tolist(), m.hi.tolist()) for m in planned]

    # DuckDB prunes the STR row groups: over the same queries it reads a smaller share of the
    # row groups (and fewer rows) than from the same files written as one row group each
    single_rg = []
    for i, path in enumerate(paths):
        out = str(tmp_path / f"one-{i}.parquet")
        pq.write_table(pq.read_table(path), out, row_group_size=10**9)
        single_rg.append(out)
    con, prof = duckdb_connect(tmp_path)
    str_scanned, str_total = _row_groups_scanned(con, prof, paths, queries)
    one_scanned, one_total = _row_groups_scanned(con, prof, single_rg, queries)
    assert str_total == 3 * one_total
    assert str_scanned / str_total < one_scanned / one_total, (str_scanned, str_total, one_scanned, one_total)
    # the descriptor-aware check counts exactly the row groups DuckDB reads, and
    # the rows it reads are fewer than the rows of the files a file-level min/max touches
    boxes = [(g, f) for f, p in enumerate(paths) for g in _footer_boxes(p, cols)]
    lo = np.array([b[0][0] for b in boxes]); hi = np.array([b[0][1] for b in boxes])
    rows = np.array([b[0][2] for b in boxes], dtype=float); file_of = np.array([b[1] for b in boxes])
    counted, str_rows, file_rows = 0, 0.0, 0.0
    per_file = np.bincount(file_of, weights=rows)
    for qlo, qhi, a, b in queries:
        box = DBox.from_bounds({"l_shipdate": (logical_types.encode_scalar("date", qlo),
                                               logical_types.encode_scalar("date", qhi)),
                                "l_quantity": (a, b)}, cols)
        counted += int(np.all((lo <= box.hi) & (hi >= box.lo), axis=1).sum())
        str_rows += row_group_cost(lo, hi, rows, file_of, box)[1]
        flo = np.array([lo[file_of == f].min(axis=0) for f in range(len(paths))])
        fhi = np.array([hi[file_of == f].max(axis=0) for f in range(len(paths))])
        file_rows += float(per_file[np.all((flo <= box.hi) & (fhi >= box.lo), axis=1)].sum())
    assert counted == str_scanned
    assert str_rows < file_rows


def test_design_prices_the_precise_descriptors_and_refuses_a_bad_n_mbr():
    from engine.core.errors import InvalidParameterError
    from engine.design.paw.designer import design_paw
    from engine.policy.paw import PawPolicy

    rng = np.random.default_rng(5)
    x = np.vstack([rng.uniform(0, 10, (400, 2)), rng.uniform(90, 100, (400, 2))])
    sample = {"x": x[:, 0], "y": x[:, 1]}
    history = [{"x": (0.0, 60.0), "y": (0.0, 60.0)}]  # meets the low cluster and the gap
    d = design_paw(sample, history, table_rows=800, b_min_rows=800, delta=0.0, columns=("x", "y"), n_mbr=2)
    assert d.costs["paw"]["history"] == 800.0  # one partition: the whole table
    assert d.costs["paw_precise"]["history"] == 800.0  # the query meets the low cluster's MBR
    (leaf,) = d.to_json()["leaves"]
    assert len(leaf["mbrs"]) == 2 and leaf["mbrs"][0]["x"][1] <= 10.0 and leaf["mbrs"][1]["x"][0] >= 90.0
    gap = design_paw(sample, [{"x": (20.0, 80.0), "y": (20.0, 80.0)}], table_rows=800, b_min_rows=800,
                     delta=0.0, columns=("x", "y"), n_mbr=2)
    assert gap.costs["paw"]["history"] == 800.0 and gap.costs["paw_precise"]["history"] == 0.0
    assert "paw_precise" not in design_paw(sample, history, table_rows=800, b_min_rows=800, delta=0.0,
                                           columns=("x", "y")).costs
    with pytest.raises(InvalidParameterError, match="n_mbr must be >= 0"):
        PawPolicy(n_mbr=-1)
    with pytest.raises(InvalidParameterError, match="n_mbr must be an integer"):
        PawOrdering(["x"], tree={"nodes": [{"leaf": 0}]}, n_mbr="3").fit({"x": np.zeros(2)})
