"""A column's statistics are found by its position in the schema, not by splitting its
Parquet path on dots: a top-level column named ``a.b`` (or holding a statement) keeps its
bounds and null count, a struct's leaves stay nested (no bounds), and pruning over such a
column keeps the files that hold matching rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from engine.scan.pruning import analyze_fragment
from engine.table.footers import read_partitions
from engine.table.model import ZoneMaps
from engine.workload.model import Range, ScanFragment

DOTTED = "k\") from (select 1 as k); copy (select 42 as pwned) to 'x.csv'; select max(\"k"


def test_a_dotted_top_level_column_keeps_its_statistics_beside_a_struct(tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({
        "a.b": pa.array([3, 9, None], pa.int64()),
        "a": pa.array([{"b": 1}, {"b": 2}, {"b": 3}], pa.struct([("b", pa.int64())])),
        DOTTED: pa.array([10, 20, 30], pa.int64()),
        "m": pa.array([[("x", 1)], [], None], pa.map_(pa.string(), pa.int64())),
        "z": pa.array([1.5, 2.5, 3.5]),
    }), path)
    schema, (part,) = read_partitions([str(path)])
    assert schema.columns == (("a.b", "int"), ("a", "other"), (DOTTED, "int"), ("m", "other"),
                              ("z", "float"))
    got = {n: (s.min, s.max, s.null_count) for n, s in part.columns.items()}
    assert got["a.b"] == (3, 9, 1)
    assert got[DOTTED] == (10, 30, 0)
    assert got["z"] == (1.5, 3.5, 0)
    assert got["a"][:2] == (None, None) and got["m"][:2] == (None, None)
    assert all(part.columns[n].compressed_bytes > 0 for n in ("a.b", "a", DOTTED, "m", "z"))


def test_pruning_on_a_dotted_column_keeps_the_files_with_matching_rows(tmp_path):
    paths = []
    for f in range(4):
        paths.append(str(tmp_path / f"f{f}.parquet"))
        pq.write_table(pa.table({DOTTED: pa.array(range(f * 10, f * 10 + 10), pa.int64())}),
                       paths[-1])
    schema, parts = read_partitions(paths)
    zm = ZoneMaps.from_partitions(schema, parts)
    frag = ScanFragment("q", "t", ({DOTTED: Range(12, 25, True, True)},), (DOTTED,))
    assert analyze_fragment(zm, frag).scanned.tolist() == [False, True, True, False]
