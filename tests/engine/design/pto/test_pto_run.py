"""A PTO plan created, approved and run by the real Spark
executor on real Parquet files, checked from the written files' footers.

The table: 40,000 rows in 20 ingestion-ordered files; ``region`` has 12 values (the only
column inside the partition guardrails: 10 <= NDV <= 4,000, and ``day``'s NDV is ~7,000),
``day`` spreads over 8,000 days, ``payload`` is 48 random hex characters (incompressible,
so bytes follow rows). Every query picks one region; two in three also a 400-day range.
Partitioning on ``region`` skips 11/12 of the rows of every query for one file opened per
query; an unpartitioned sort on ``region`` only approaches it (its files straddle two
regions, so a query opens two), and PTO's choice partitions on it here (asserted; then
every physical property is checked against the chosen design).
"""

from __future__ import annotations

import datetime as dt
import math
import os
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.layout.output import output_shape
from engine.table.info import WriteTarget
from engine.table.store import TableStore
from engine.workload.model import Range, ScanFragment
from engine.workload.store import WorkloadStore
from plan_helpers import make_table, rows_of
from security_helpers import sign_in

pytestmark = pytest.mark.spark

N, PER_FILE = 40_000, 2_000
EPOCH = dt.date(2000, 1, 1)
REGIONS = [f"R{i:02d}" for i in range(12)]


def _sales(n: int = N, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    payload = rng.integers(0, 16, (n, 48))
    hexd = np.array(list("0123456789abcdef"))
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "region": pa.array([REGIONS[i] for i in rng.integers(0, 12, n)]),
        "day": pa.array([EPOCH + dt.timedelta(days=int(d)) for d in rng.integers(0, 8000, n)],
                        pa.date32()),
        "qty": pa.array(np.round(rng.random(n) * 50, 2)),
        "payload": pa.array(["".join(r) for r in hexd[payload]]),
    })


def _workload(n: int = 24, seed: int = 4) -> list[ScanFragment]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        r = REGIONS[int(rng.integers(0, 12))]
        box = {"region": Range(r, r)}
        if i % 3 != 2:
            lo = EPOCH + dt.timedelta(days=int(rng.integers(0, 7000)))
            box["day"] = Range(lo, lo + dt.timedelta(days=400))
        out.append(ScanFragment(f"q{i}", "sales", (box,), tuple(box)))
    return out


@pytest.fixture
def sales(settings):
    snap = make_table(settings, "sales", rows_per_file=PER_FILE, data=_sales())
    WorkloadStore(settings).append("sales", _workload(), snap.schema)
    return snap


def _canonical(table: pa.Table) -> pa.Table:
    return table.sort_by([("id", "ascending")])


def test_pto_plan_runs_on_spark_and_the_files_follow_the_design(settings, spark, sales):
    plan = api.create_plan(settings, "sales", "pto", created_by=sign_in(settings, "carol"))
    assert plan.status == "proposed"
    (group,) = plan.groups
    params = group["layout_params"]
    choice = plan.details["choice"]
    assert params["partition_by"] == choice["partition_by"] == "region"
    tfs, rgs = params["target_file_bytes"], params["row_group_bytes"]
    assert (tfs, rgs) == (choice["target_file_bytes"], choice["row_group_bytes"])
    alice = sign_in(settings, "alice")
    if api.approve_plan(settings, plan.id, alice, reason="PTO design").status == "proposed":
        api.approve_plan(settings, plan.id, sign_in(settings, "bob"), reason="PTO design")
    result = api.run_plan(settings, plan.id, spark=spark, actor=alice)

    after = TableStore(settings).current_snapshot("sales")
    assert after.id == result["snapshot_id"]
    files = [p.path for p in after.partitions]
    assert not {p.path for p in sales.partitions} & set(files)  # a full-table rewrite

    # count and checksum (the executor's check), then the content through two readers
    assert sum(p.rows for p in after.partitions) == N
    before_paths = [p.path for p in sales.partitions]
    assert rows_of(files).equals(rows_of(before_paths))  # DuckDB
    written = _canonical(pa.concat_tables([pq.read_table(f) for f in files]))  # plain pyarrow
    original = _canonical(pa.concat_tables([pq.read_table(f) for f in before_paths]))
    assert written.schema == original.schema and written.equals(original)

    # no file straddles two partition values; the sort scheme holds inside each file
    width = sum(p.bytes for p in sales.partitions) / N  # the executor's bytes -> rows rule
    rows_per_file = max(1, round(tfs / width))
    by_region: dict[str, list[tuple[str, pq.FileMetaData]]] = defaultdict(list)
    for f in files:
        t = pq.read_table(f, columns=["region", *choice["sort_columns"]])
        regions = set(t.column("region").to_pylist())
        assert len(regions) == 1, (f, regions)
        if choice["sort_kind"] == "sort":
            key = t.column(choice["sort_columns"][0]).to_pylist()
            assert key == sorted(key), f
        by_region[regions.pop()].append((f, pq.ParquetFile(f).metadata))
    assert sorted(by_region) == REGIONS

    # file sizes: per partition value, within one file of ceil(rows / target rows) and of
    # ceil(bytes / target_file_bytes); no file above the target's rows
    for region, written_files in by_region.items():
        rows = sum(m.num_rows for _, m in written_files)
        nbytes = sum(os.path.getsize(f) for f, _ in written_files)
        n = len(written_files)
        assert abs(n - math.ceil(rows / rows_per_file)) <= 1, (region, n, rows, rows_per_file)
        assert abs(n - math.ceil(nbytes / tfs)) <= 1, (region, n, nbytes, tfs)
        assert all(m.num_rows <= rows_per_file for _, m in written_files)
    # row groups: in rows, exactly as the output model priced them (row_group_bytes at the
    # inputs' compressed row width); every row group but a file's last holds that many
    shape = output_shape([p.rows for p in sales.partitions], sum(p.bytes for p in sales.partitions),
                         WriteTarget(), params, "sort")
    assert shape.row_group_rows == max(1, round(rgs / width)) < shape.rows_per_file, shape
    n_groups = 0
    for written_files in by_region.values():
        for _, m in written_files:
            sizes = [m.row_group(i).num_rows for i in range(m.num_row_groups)]
            assert all(r == shape.row_group_rows for r in sizes[:-1]), (sizes, shape)
            assert sizes[-1] <= shape.row_group_rows, (sizes, shape)
            n_groups += m.num_row_groups
    n_files = len(files)
    # the check is not vacuous: the design asks for several row groups per file or several
    # files per partition value, and the files show it
    assert n_groups > n_files or n_files > len(REGIONS), (n_groups, n_files, tfs, rgs)

