"""Every supported type as the clustering column of a plan run on an Iceberg table and on a
Delta table: plan ->
approve -> Spark executor run -> the format's own reader returns the same rows (count and
content hash) with the same types, and each group's new files are sorted on its column.

Speed: one small table per format holding every type; one plan per format whose groups
each cluster on another column, so one executor run (at most two Spark jobs,
tests/engine/spark/test_executor_layouts.py) covers every type. The native format's version:
``test_rewritten_files_keep_the_exact_arrow_schema_and_values`` there (whose rows these are).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyiceberg.io.pyarrow import parquet_file_to_data_file

from engine import api
from engine.policy.base import PlanGroup
from format_helpers import (IDENT, delta_scan, delta_table, iceberg_scan, iceberg_table,
                            live_data_files, local)
from plan_helpers import insert_plan
from security_helpers import sign_in
from test_executor_layouts import TYPES, _typed_rows

pytestmark = pytest.mark.spark

#: every column type the advisor clusters on (bool: the executor sorts it although the
#: policies never propose it). Binary and fixed columns are not clustering columns: their
#: logical type is "other", without bounds and outside ``TableSchema.orderable()``
#: (tests/engine/table/formats/test_formats_iceberg_bounds.py)
KEYS = tuple(TYPES.names)
ROWS_PER_FILE = 30


def _data() -> pa.Table:
    """Two files' worth of rows per clustering column; every 7th value null."""
    return _typed_rows(2 * ROWS_PER_FILE * len(KEYS), 0)


def _file_types(path: str) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in pq.read_schema(local(path))]


def _run_one_group_per_key(settings, spark, snap) -> dict:
    """One plan: group k sorts the k-th pair of files on KEYS[k]."""
    paths = [p.path for p in snap.partitions]
    assert len(paths) == 2 * len(KEYS)
    groups = [PlanGroup(tuple(paths[2 * k:2 * k + 2]), "sort", (key,), f"cluster on {key}")
              for k, key in enumerate(KEYS)]
    pid = insert_plan(settings, snap, groups)
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="typed run")
    return api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)


def _check_groups(result: dict, old_types: list) -> None:
    """Each group's new files: the old files' Parquet types, rows sorted on its key."""
    assert [g["rows"] for g in result["groups"]] == [2 * ROWS_PER_FILE] * len(KEYS)
    for key, group in zip(KEYS, result["groups"]):
        assert group["files"], key
        for path in group["files"]:
            assert _file_types(path) == old_types, (key, path)
            values = [v for v in pq.read_table(local(path), columns=[key]).column(key).to_pylist()
                      if v is not None]
            assert values == sorted(values), key


def test_iceberg_plan_clusters_on_every_type_and_pyiceberg_reads_the_same_rows(settings, spark):
    data = _data()
    catalog, tbl = iceberg_table(settings, data, ROWS_PER_FILE)
    snap = api.register_iceberg(settings, "typed", IDENT)
    assert dict(snap.schema.columns) == {
        "i32": "int", "i64": "int", "f32": "float", "f64": "float", "dec": "decimal", "d": "date",
        "ts": "timestamp", "tsz": "timestamp", "s": "string", "b": "bool"}
    before = iceberg_scan(catalog)
    reader_schema = tbl.scan().to_arrow().schema
    iceberg_schema = tbl.schema()
    old_types = _file_types(snap.partitions[0].path)
    result = _run_one_group_per_key(settings, spark, snap)
    tbl = catalog.load_table(IDENT)
    assert str(tbl.current_snapshot().snapshot_id) == result["snapshot_id"]
    assert iceberg_scan(catalog) == before == (data.num_rows, before[1])
    assert tbl.scan().to_arrow().schema == reader_schema and tbl.schema() == iceberg_schema
    assert not {p.path for p in snap.partitions} & set(live_data_files(tbl))
    _check_groups(result, old_types)
    # the entries the commit built from the executor's footer read: split offsets as
    # pyiceberg computes them from the Spark-written files
    for path, entry in live_data_files(tbl).items():
        assert entry.split_offsets == parquet_file_to_data_file(tbl.io, tbl.metadata,
                                                                path).split_offsets, path


def test_delta_plan_clusters_on_every_type_and_deltalake_reads_the_same_rows(settings, spark,
                                                                           tmp_path):
    path = str(tmp_path / "typed")
    data = _data()
    delta_table(path, data, ROWS_PER_FILE)
    snap = api.register_delta(settings, "typed", path)
    before = delta_scan(path)
    reader_schema = pa.table(DeltaTable(path).to_pyarrow_table()).schema
    old_types = _file_types(snap.partitions[0].path)
    result = _run_one_group_per_key(settings, spark, snap)
    table = DeltaTable(path)
    assert str(table.version()) == result["snapshot_id"]
    assert delta_scan(path) == before and before[0] == data.num_rows
    assert pa.table(table.to_pyarrow_table()).schema == reader_schema
    assert not {p.path for p in snap.partitions} & {
        f"{path}/{a}" for a in table.get_add_actions(flatten=True).column("path").to_pylist()}
    _check_groups(result, old_types)
