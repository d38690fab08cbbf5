"""Columns a Spark rewrite cannot carry are refused before Spark starts, in one line that
says what the file holds: a ``map`` (Spark's ``xxhash64``, which the row checksum applies
to every column, cannot hash maps) and INT96 timestamps (the legacy Hive, Impala and old
Spark encoding, which pyarrow reads as nanoseconds and Spark writes back as INT64)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine import api
from engine.core.errors import ExecutionError
from engine.policy.base import PlanGroup
from engine.spark import arrow_types
from engine.table.footers import read_partitions
from engine.table.store import TableStore
from plan_helpers import insert_plan
from security_helpers import sign_in

N = 40


def _map_rows(k0: int) -> pa.Table:
    ks = range(k0, k0 + N)
    return pa.table({"k": pa.array(ks, pa.int64()),
                     "tags": pa.array([[("a", k), ("b", -k)] for k in ks],
                                      pa.map_(pa.string(), pa.int64()))})


def _ts_rows(k0: int) -> pa.Table:
    ks = range(k0, k0 + N)
    return pa.table({"k": pa.array(ks, pa.int64()),
                     "event_time": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(minutes=k)
                                             for k in ks], pa.timestamp("us"))})


def _approved_plan(settings, rows, int96: bool = False):
    store = TableStore(settings)
    root = store.managed_location("legacy")
    os.makedirs(root, exist_ok=True)
    paths = []
    for i in range(2):
        paths.append(f"{root}/part-{i}.parquet")
        pq.write_table(rows(i * N), paths[-1], use_deprecated_int96_timestamps=int96)
    schema, parts = read_partitions(paths)
    base = store.create("legacy", schema=schema, partitions=parts, operation="create",
                        target_rows=N)
    pid = insert_plan(settings, base, [PlanGroup(tuple(paths), "sort", ("k",), "t")])
    for approver in ("alice", "bob"):  # the proposer did not sign in: two approvals
        if api.show_plan(settings, pid).status == "proposed":
            api.approve_plan(settings, pid, sign_in(settings, approver), reason="types")
    return store, base, paths, pid


@pytest.mark.parametrize("rows,int96,expect", [
    (_map_rows, False, r"column 'tags' of .*part-0\.parquet has type map<string, int64.*Spark "
                       r"cannot hash a map"),
    (_ts_rows, True, r"column 'event_time' of .*part-0\.parquet holds INT96 timestamps \(the "
                     r"legacy Hive, Impala and old Spark encoding\)"),
], ids=["map", "int96"])
def test_the_run_is_refused_before_spark_naming_the_column(settings, monkeypatch, rows, int96,
                                                           expect):
    def no_spark(*_a, **_k):
        raise AssertionError("Spark was started")

    monkeypatch.setattr("engine.spark.executor.get_spark", no_spark)
    store, base, paths, pid = _approved_plan(settings, rows, int96)
    before = {p: Path(p).read_bytes() for p in paths}
    with pytest.raises(ExecutionError, match=expect) as info:
        api.run_plan(settings, pid, actor=sign_in(settings, "alice"))
    assert "\n" not in str(info.value) and "nothing was written" in str(info.value)
    assert "nanosecond" not in str(info.value)
    assert store.current_id("legacy") == base.id
    assert {p: Path(p).read_bytes() for p in paths} == before


def test_a_map_nested_in_a_list_is_refused_and_int64_nanoseconds_keep_their_message(tmp_path):
    nested = pa.schema([("k", pa.int64()), ("m", pa.list_(pa.map_(pa.string(), pa.int32())))])
    assert "cannot hash a map" in arrow_types.unsupported(nested.field("m").type)
    path = tmp_path / "ns.parquet"
    pq.write_table(pa.table({"t": pa.array([1, 2], pa.timestamp("ns"))}), path)
    with pytest.raises(ExecutionError, match=r"has type timestamp\[ns\].*microseconds only"):
        arrow_types.refuse_unsupported(arrow_types.read_schema(str(path)), str(path))
