"""NaN in a float column never makes pruning skip a file DuckDB would read rows from.
The files are written by Spark (as a rewrite writes them): Spark's Parquet writer
puts NaN into the column statistics (max = NaN) where pyarrow leaves NaN out. For ranges open
and closed on either side, every file the zonemaps prune must hold no row DuckDB matches.

The footer reader reads a NaN maximum as +inf (NaN sorts above every number in DuckDB and
Spark) and a NaN minimum as unknown bounds (``engine.table.footers._nan_bounds``); the
pruning's comparisons then never drop such a file for a range that matches NaN rows.
"""

from __future__ import annotations

import glob

import duckdb
import pytest

from engine.scan.pruning import analyze_fragment
from engine.table.footers import read_partitions
from engine.table.model import ZoneMaps
from engine.workload.model import Range, ScanFragment

RANGES = {  # SQL condition -> the same range
    "x > 100": Range(100.0, None, False, True),
    "x >= 15": Range(15.0, None, True, True),
    "x < 5": Range(None, 5.0, True, False),
    "x BETWEEN 12 AND 14": Range(12.0, 14.0),
    "x <= 1e300": Range(None, 1e300),
}


@pytest.mark.spark
def test_pruning_never_skips_a_file_duckdb_reads_rows_from(spark, tmp_path):
    rows = [(float("nan") if i % 9 == 4 and i < 40 else float(i), i) for i in range(80)]
    (spark.createDataFrame(rows, "x double, k long").repartition(4, "k").sortWithinPartitions("k")
     .write.parquet(str(tmp_path / "t")))
    paths = sorted(glob.glob(str(tmp_path / "t" / "*.parquet")))
    schema, parts = read_partitions(paths)
    zm = ZoneMaps.from_partitions(schema, parts)
    con = duckdb.connect()
    with_nan = {p for p in paths
                if con.execute(f"SELECT count(*) FROM read_parquet('{p}') WHERE isnan(x)").fetchone()[0]}
    assert with_nan and len(with_nan) < len(paths)  # both kinds of file are there
    wrong = []
    for sql, rng in RANGES.items():
        scan = analyze_fragment(zm, ScanFragment(sql, "t", ({"x": rng},), ("x",)))
        scanned = {parts[i].path for i in scan.index.tolist()}
        for p in paths:
            hits = con.execute(f"SELECT count(*) FROM read_parquet('{p}') WHERE {sql}").fetchone()[0]
            if hits and p not in scanned:
                wrong.append((sql, p, hits))
    assert not wrong, wrong  # files whose statistics say max = NaN included
