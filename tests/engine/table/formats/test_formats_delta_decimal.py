"""A Delta rewrite writes decimal statistics with every digit: decimal(38,18) bounds that a
float would round come back from delta-rs's own reader equal to the data's min and max."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

from engine.table.footers import read_partitions
from engine.table.store import TableStore

D = decimal.Decimal
#: bounds a float cannot hold: 38 significant digits, and a tiny scale-18 value
VALUES = [D("12345678901234567890.123456789012345678"), D("0.000000000000000001"),
          D("-99999999999999999999.999999999999999999"), D("1.100000000000000001")]


def test_decimal_bounds_are_written_exactly(settings, tmp_path):
    assert float(VALUES[0]) != VALUES[0] and float(VALUES[3]) != VALUES[3]
    path = str(tmp_path / "dec")
    data = pa.table({"id": pa.array(range(len(VALUES)), pa.int64()),
                     "d": pa.array(VALUES, pa.decimal128(38, 18))})
    write_deltalake(path, data)
    store = TableStore(settings)
    base = store.register_delta("dec", path)
    old = base.partitions[0].path
    out = store.new_data_dir("dec", "decimal-test")
    new = f"{out}/part-0.parquet"
    pq.write_table(pq.read_table(old), new)  # the same rows, a new file
    _, added = read_partitions([new], schema=base.schema)
    store.format("dec").commit_rewrite(base.id, [old], added, {"plan_id": "decimal-test"})

    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pylist()
    assert [a["path"].rsplit("/", 1)[-1] for a in actions] == ["part-0.parquet"]
    assert actions[0]["min.d"] == min(VALUES) and actions[0]["max.d"] == max(VALUES)
    # and the advisor's own snapshot of the table reads the same exact bounds
    stats = store.current_snapshot("dec").partitions[0].columns["d"]
    assert (stats.min, stats.max) == (min(VALUES), max(VALUES))
    assert sorted(DeltaTable(path).to_pyarrow_table().column("d").to_pylist()) == sorted(VALUES)
