"""analyze / ep_metrics / pruning through the API and the CLI on a real registered table."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.cli import main
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore

D0 = dt.date(1995, 1, 1)


@pytest.fixture
def table(settings, tmp_path):
    """8 files in 'order date' order: k sorted, ship dates trail by up to 200 days."""
    rng = np.random.default_rng(4)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    paths = []
    for f in range(8):
        order = np.arange(f * 100, f * 100 + 100)
        ship = order + rng.integers(0, 200, 100)
        t = pa.table({
            "k": pa.array(order, pa.int64()),
            "ship": pa.array([D0 + dt.timedelta(days=int(x)) for x in ship], pa.date32()),
            "name": pa.array([f"n{x % 7}" for x in order], pa.string()),
        })
        path = data_dir / f"f{f}.parquet"
        pq.write_table(t, path)
        paths.append(str(path))
    schema, parts = read_partitions(paths)
    TableStore(settings).create("orders", schema=schema, partitions=parts, operation="register",
                                location=str(data_dir), managed=False)
    frags = [
        ScanFragment("q1", "orders", ({"ship": Range(D0 + dt.timedelta(days=150),
                                                     D0 + dt.timedelta(days=160))},), ("k",),
                     ts="2024-01-01T00:00:00"),
        ScanFragment("q2", "orders", ({"k": Range(0, 199)},), ("k", "name"), ts="2024-01-01T00:01:00"),
        ScanFragment("q3", "orders", (), ("name",), ts="2024-01-01T00:02:00"),
    ]
    WorkloadStore(settings).append("orders", frags, schema)
    return "orders"


def test_analyze_api_fields_and_values(settings, table):
    rows = api.analyze(settings, table)
    by = {r.column: r for r in rows}
    assert set(by) == {"k", "ship", "name"}
    k, ship = by["k"], by["ship"]
    assert k.total_partition_count == 8 and k.average_depth == 1.0
    assert k.average_overlaps == 0.0 and k.verdict == "green"
    assert ship.average_depth > 2 and ship.verdict in ("amber", "red")
    per = api.column_clustering(settings, table, "ship")
    assert ship.depth_profile[0][0] == min(per.min)  # ISO dates, domain start
    assert ship.depth_profile[-1][1] == max(per.max)
    assert max(seg[2] for seg in ship.depth_profile) - 1 <= ship.deepest_ranges[0]["depth"]
    assert ship.deepest_ranges[0]["depth"] <= ship.max_depth
    assert sum(ship.partition_depth_histogram.values()) == 8
    assert by["name"].average_depth == 8.0  # every file holds n0..n6


def test_analyze_with_ep_files_and_ep_metrics(settings, table):
    rows = api.analyze(settings, table, columns="SHIP", ep_file_partitions=2)
    assert [r.column for r in rows] == ["ship"]
    ep = rows[0].ep
    assert ep["ep_file_count"] == 4 and ep["ep_file_partitions"] == 2
    full = api.ep_metrics(settings, table, "ship", ep_file_partitions=4)
    assert full["ep_file_count"] == 2
    assert [f["partition_count"] for f in full["ep_files"]] == [4, 4]
    assert full["deepest_subrange"]["ep_files"]


def test_column_clustering_accessor_arrays(settings, table):
    data = api.column_clustering(settings, table, "ship")
    assert len(data.paths) == len(data.depths) == len(data.min) == 8
    first = pq.read_table(data.paths[0]).column("ship")
    assert data.min[0] == min(first.to_pylist()).isoformat()
    assert data.max[0] == max(first.to_pylist()).isoformat()
    assert all(d >= 1 for d in data.depths)


def test_pruning_api_estimates(settings, table):
    rows = api.pruning(settings, table, per_partition=True)
    assert [r["query_id"] for r in rows] == ["q1", "q2", "q3"]
    q2 = rows[1]
    assert q2["scanned"] == 2 and q2["pruned"] == 6 and q2["fully_covered"] == 2
    assert q2["boundary"] == 0 and q2["pruning_rate"] == 0.75
    assert q2["per_partition"]["utilization"][:3] == [1.0, 1.0, 0.0]
    q1 = rows[0]
    assert q1["boundary"] == q1["scanned"] > 0  # ship dates straddle the range
    assert rows[2]["scanned"] == 8 and rows[2]["pruning_rate"] == 0.0


def test_cli_analyze_and_pruning_text_and_json(settings, table, capsys):
    home = str(settings.home)
    assert main(["--home", home, "analyze", table]) == 0
    out = capsys.readouterr().out
    assert "k" in out and "GREEN" in out
    assert main(["--home", home, "analyze", table, "--columns", "k,ship", "--ep-files", "2",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["column"] for d in data] == ["k", "ship"] and "ep" in data[1]
    assert main(["--home", home, "pruning", table, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"query_id", "scanned", "pruned", "fully_covered", "boundary", "pruning_rate",
            "bytes_scanned"} <= set(data[0])
    assert main(["--home", home, "pruning", table]) == 0
    assert "3 queries" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["analyze", "nope"], "nope"),
    (["analyze", "orders", "--columns", "zzz"], "zzz"),
    (["analyze", "orders", "--snapshot", "99"], "99"),
    (["pruning", "nope"], "nope"),
])
def test_cli_user_errors_exit_2_one_line(settings, table, capsys, argv, needle):
    assert main(["--home", str(settings.home), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("layout-advisor: error:") and needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
