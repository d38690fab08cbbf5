"""A rewrite never changes a type: the types a Spark rewrite would change, each in its own column of one table, rewritten by a real plan run; every
field of every new file must equal its input field (type, unit, time zone, nullability,
field metadata) and every value must survive.

Spark reads and writes these through its own type system (TIMESTAMP as UTC microseconds,
one string type, nullable fields, no field metadata); the executor gives the written files
the input's exact Arrow schema back before verifying them
(:mod:`engine.spark.arrow_types`). A type Spark cannot carry at all (an unsigned integer):
the run must fail before writing, with one line naming the column, and change nothing.
"""

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

N = 400
#: the types the issue found changed by a rewrite, beside a plain key column
FIELDS = [
    pa.field("k", pa.int64(), nullable=False),
    pa.field("ts_paris", pa.timestamp("us", tz="Europe/Paris")),
    pa.field("ts_ms", pa.timestamp("ms")),
    pa.field("big_text", pa.large_string()),
    pa.field("tagged", pa.int32(), metadata={b"comment": b"kept verbatim"}),
]


def _rows(start: int) -> pa.Table:
    base = dt.datetime(2024, 3, 30, 23, 0)
    ks = range(start, start + N // 4)
    return pa.table({
        "k": [(k * 7919) % N for k in ks],
        "ts_paris": [base + dt.timedelta(minutes=17 * k) for k in ks],
        "ts_ms": [base + dt.timedelta(milliseconds=k) for k in ks],
        "big_text": [f"row {k}" for k in ks],
        "tagged": [k % 13 for k in ks],
    }, schema=pa.schema(FIELDS))


def _changed(expected: pa.Schema, got: pa.Schema) -> list[str]:
    return [f"{f.name}: {f} -> {got.field(f.name)}" for f in expected
            if not got.field(f.name).equals(f, check_metadata=True)]


def _typed_table(settings, rows) -> tuple:
    store = TableStore(settings)
    root = store.managed_location("typed")
    os.makedirs(root, exist_ok=True)
    paths = []
    for i in range(4):
        paths.append(f"{root}/ingest-{i}.parquet")
        pq.write_table(rows(i * N // 4), paths[-1])
    schema, parts = read_partitions(paths)
    base = store.create("typed", schema=schema, partitions=parts, operation="create",
                        target_rows=N // 2)
    pid = insert_plan(settings, base, [PlanGroup(tuple(paths), "sort", ("k",), "t")])
    api.approve_plan(settings, pid, sign_in(settings, "alice"), reason="types")
    return store, base, paths, pid


@pytest.mark.spark
def test_a_rewrite_keeps_every_field_exactly(settings, spark):
    store, base, paths, pid = _typed_table(settings, _rows)
    api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    new = [p.path for p in store.current_snapshot("typed").partitions]
    assert new and not set(new) & set(paths)
    before = pa.concat_tables([pq.read_table(p) for p in paths]).sort_by("k")
    after = pa.concat_tables([pq.read_table(p) for p in new]).sort_by("k")
    assert after.num_rows == before.num_rows
    assert after.cast(before.schema).equals(before)  # every value survives
    expected = pq.read_schema(paths[0])
    assert expected.field("k").nullable is False and expected.field("tagged").metadata
    problems = sorted({c for p in new for c in _changed(expected, pq.read_schema(p))})
    assert not problems, problems
    # the exact types are what the table now reports and what pyarrow reads back
    after_types = dict(store.current_snapshot("typed").schema.columns)
    assert after_types == dict(base.schema.columns)
    assert after.schema.equals(before.schema, check_metadata=False)
    assert after.equals(before)


def _unsupported_rows(column: str, kind: pa.DataType, value):
    def rows(start: int) -> pa.Table:
        ks = range(start, start + N // 4)
        return pa.table({"k": pa.array(ks, pa.int64()),
                         column: pa.array([value(k) for k in ks], kind)})
    return rows


@pytest.mark.spark
@pytest.mark.parametrize("column,kind,value,name", [
    ("u32", pa.uint32(), lambda k: 4_000_000_000 - k, "uint32"),  # found turned into int64
    ("at", pa.time64("us"), lambda k: dt.time(k % 24, k % 60), "time64\\[us\\]"),
])
def test_a_type_spark_cannot_carry_fails_the_run_and_changes_nothing(settings, spark, column,
                                                                     kind, value, name):
    """The run must refuse before writing, with one line naming the column and its type,
    not convert (Spark has no unsigned integers and no time of day)."""
    store, base, paths, pid = _typed_table(settings, _unsupported_rows(column, kind, value))
    before = {p: Path(p).read_bytes() for p in paths}
    with pytest.raises(ExecutionError, match=rf"column '{column}' .* has type {name}.* nothing "
                                             r"was written") as info:
        api.run_plan(settings, pid, actor=sign_in(settings, "alice"), spark=spark)
    assert "\n" not in str(info.value)
    assert store.current_id("typed") == base.id
    assert {p: Path(p).read_bytes() for p in paths} == before
    assert api.show_plan(settings, pid).status == "failed"
    assert sorted(str(p) for p in Path(store.managed_location("typed")).rglob("*.parquet")) \
        == sorted(paths)  # the run left no file behind



def test_a_worker_error_on_the_executors_is_one_line(spark, tmp_path):
    """The restore and STR steps share one runner: a worker's failure (here: the written
    files are gone) reaches the user as one ExecutionError naming the step and the
    worker's own error, not Spark's stack."""
    gone = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    with pytest.raises(ExecutionError) as caught:
        arrow_types.on_executors(spark, gone, arrow_types._restore_many(pa.schema([("k", pa.int64())])),
                                 "the written files could not be given the table's exact types")
    message = str(caught.value)
    assert "\n" not in message and "at org.apache" not in message
    assert message.startswith("the written files could not be given the table's exact types (")
    assert "FileNotFoundError" in message and ("a.parquet" in message or "b.parquet" in message)
    assert message.endswith("); nothing was committed")
