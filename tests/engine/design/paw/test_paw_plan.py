"""PAW in the product: design preview, `plan create --policy paw`, approve, run on Spark."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.core import logical_types
from engine.layout.paw import PawOrdering
from engine.spark.ingest import create_table
from engine.table.store import TableStore
from plan_helpers import EPOCH, lineitem_arrow, rows_of
from security_helpers import sign_in

pytestmark = pytest.mark.spark


def recurring_workload(settings, tmp_path, rows: int = 4000, target_rows: int = 500, spark=None):
    """``rows`` rows in files of ``target_rows``; 20 queries on ship date x quantity that
    recur (δ-similar), imported. Returns (snapshot, [(date lo, date hi, qty lo, qty hi)])."""
    src = tmp_path / "lineitem.parquet"
    pq.write_table(lineitem_arrow(rows), src)
    snap = create_table(TableStore(settings), "lineitem", str(src), target_rows=target_rows, spark=spark)
    rng = np.random.default_rng(3)
    centers = [(600, 10.0), (1500, 30.0), (2600, 42.0)]
    lines, queries = [], []
    for i in range(20):
        day, qty = centers[i % 3]
        lo = EPOCH + dt.timedelta(days=int(day + rng.integers(-15, 15)))
        hi = lo + dt.timedelta(days=120)
        q = qty + float(rng.integers(-2, 2))
        queries.append((lo, hi, q, q + 6))
        lines.append(f"-- ts: 2024-01-01T00:{i:02d}:00\nSELECT count(*) FROM lineitem WHERE l_shipdate "
                     f"BETWEEN DATE '{lo}' AND DATE '{hi}' AND l_quantity BETWEEN {q} AND {q + 6};")
    log = tmp_path / "queries.sql"
    log.write_text("\n".join(lines))
    assert api.import_workload(settings, "lineitem", str(log))["fragments"] == 20
    return snap, queries


@pytest.fixture
def lineitem(settings, spark, tmp_path):
    """4000 rows in 8 files; 20 queries on ship date x quantity that recur (δ-similar)."""
    return recurring_workload(settings, tmp_path, spark=spark)[0]


def _leaves_of_files(paths, ordering):
    """For each written file, the set of PAW leaves its rows route to."""
    out = []
    for path in paths:
        t = pq.read_table(path, columns=list(ordering.columns))
        types = {"l_shipdate": "date", "l_quantity": "float"}
        data = {c: logical_types.encode_arrow(types[c], t.column(c))[0] for c in ordering.columns}
        out.append(set(ordering.keys(data).tolist()))
    return out


def _exit_code(argv: list[str]) -> int:
    """``main``'s exit code, also when argparse refuses an argument (it exits with 2)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


def test_design_preview_compares_with_the_baselines(settings, lineitem):
    out = api.design_paw(settings, "lineitem", delta="auto", b_min_rows=250)
    d = out["design"]
    assert out["queries"] == 20 and set(d["summary"]["columns"]) == {"l_shipdate", "l_quantity"}
    assert sum(leaf["rows"] for leaf in d["leaves"]) == 4000
    assert all(leaf["rows"] >= 250 for leaf in d["leaves"])
    costs = d["costs"]
    assert set(costs) == {"paw", "qdtree", "kdtree", "lb_b", "lb"}
    assert costs["lb_b"]["worst_future"] <= costs["paw"]["worst_future"] <= costs["kdtree"]["worst_future"]
    assert d["summary"]["delta"] > 0  # δ′ from the two halves of the log
    # what the Design page draws: Q_H, Q_F* (q ± δ·domain length on each column), domain, types
    assert d["types"] == {"l_shipdate": "date", "l_quantity": "float"}
    hist, ext = d["queries"]["history"], d["queries"]["extended"]
    assert len(hist) == len(ext) == 20
    for q, e in zip(hist, ext):
        for col, (lo, hi) in d["domain"].items():
            pad = d["summary"]["delta"] * (hi - lo)
            assert e[col][0] == pytest.approx(q[col][0] - pad) and e[col][1] == pytest.approx(q[col][1] + pad)


def test_paw_plan_runs_through_the_gate_and_keeps_every_row(settings, spark, lineitem):
    plan = api.create_plan(settings, "lineitem", "paw", {"delta": "0.01", "b_min_rows": 250},
                           created_by=sign_in(settings, "carol"))
    assert plan.status == "proposed"
    (group,) = plan.groups
    assert group["layout"] == "paw" and set(group["partitions"]) == {p.path for p in lineitem.partitions}
    tree = group["layout_params"]["tree"]
    n_leaves = sum("leaf" in n for n in tree["nodes"])
    assert n_leaves >= 4
    alice = sign_in(settings, "alice")
    api.approve_plan(settings, plan.id, alice, reason="new workload")
    result = api.run_plan(settings, plan.id, spark=spark, actor=alice)
    after = TableStore(settings).current_snapshot("lineitem")
    assert after.id == result["snapshot_id"]
    # every row kept: the executor checked count and checksum before committing; recheck the multiset
    assert sum(p.rows for p in after.partitions) == 4000
    assert rows_of([p.path for p in after.partitions]).equals(rows_of([p.path for p in lineitem.partitions]))
    # every row routed to exactly one leaf; one or more files per leaf (files of the
    # table's target size), and never a file holding two leaves
    ordering = PawOrdering(group["columns"], tree=tree).fit(
        {"l_shipdate": np.zeros(1), "l_quantity": np.zeros(1)})
    per_file = _leaves_of_files([p.path for p in after.partitions], ordering)
    assert all(len(leaves) == 1 for leaves in per_file), per_file
    assert sorted({leaf for leaves in per_file for leaf in leaves}) == list(range(n_leaves))


def test_cli_design_paw_json_and_bad_delta(settings, lineitem, capsys):
    home = str(settings.home)
    assert main(["--home", home, "design", "paw", "lineitem", "--delta", "auto", "--b-min-rows", "250",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["design"]["summary"]["leaves"] >= 2
    assert main(["--home", home, "design", "paw", "lineitem"]) == 0
    text = capsys.readouterr().out
    assert "PAW" in text and "Qd-tree" in text and "k-d tree" in text
    assert _exit_code(["--home", home, "design", "paw", "lineitem", "--delta", "lots"]) == 2
    assert "argument --delta: 'lots' is not a number" in capsys.readouterr().err
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "paw", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["status"] == "proposed" and created["groups"][0]["layout"] == "paw"
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "paw", "--alpha", "1"]) == 2
    assert "alpha must be > 1" in capsys.readouterr().err
    # plan create takes PAW's design flags through the shared converters
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "paw", "--delta", "0.02",
                 "--b-min-rows", "250", "--psi", "printed", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["params"]["delta"] == 0.02 and created["params"]["b_min_rows"] == 250
    assert created["params"]["psi"] == "printed"
    summary = created["groups"][0]["layout_params"]["design"]["summary"]
    assert summary["delta"] == pytest.approx(0.02) and summary["psi"] == "printed"
    # precise descriptors (§V-A): the plan asks the executor for N STR row groups per file
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "paw", "--n-mbr", "3",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["layout_params"]["n_mbr"] == 3
    assert main(["--home", home, "design", "paw", "lineitem", "--n-mbr", "3", "--json"]) == 0
    assert "paw_precise" in json.loads(capsys.readouterr().out)["design"]["costs"]
    for bad, word in ((["--delta", "-1"], "--delta"), (["--delta", "nan"], "--delta"),
                      (["--b-min-rows", "0"], "--b-min-rows"), (["--psi", "bogus"], "--psi"),
                      (["--n-mbr", "-1"], "--n-mbr")):
        assert _exit_code(["--home", home, "plan", "create", "lineitem", "--policy", "paw", *bad]) == 2
        assert word in capsys.readouterr().err
    assert main(["--home", home, "plan", "create", "lineitem", "--policy", "wair", "--delta", "0.01"]) == 2
    assert "does not take delta" in capsys.readouterr().err
