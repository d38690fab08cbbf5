"""Curve keys over a timestamp and a float: bucket tables, the binary search and the UDF.

A 2-D Hilbert key over (timestamp skewed to recent years, float), fitted on a 2% sample,
computed three ways on the same rows and written to Spark's ``noop`` sink: the bucket
tables (``ExecutorOptions(bucketed=True)``, the "expression" path), the binary search
(``bucketed=False``) and the scalar Arrow UDF. Prints, per way, the time to build the
plan and two runs (the second warm). "auto" keeps these columns on the UDF
(``curve_keys.cheap``); this is the measurement that decides it (bench/executor/README.md).

    PYSPARK_PYTHON=$PWD/.venv/bin/python PYTHONPATH=. python bench/executor/bench_curve_keys.py --rows 500000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--path", default="/tmp/bench_curve_keys.parquet")
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from engine.core import logical_types
    from engine.policy.base import PlanGroup
    from engine.spark import curve_keys, fitting
    from engine.spark.jobspec import GROUP_COLUMN, KEY_COLUMN, GroupSpec
    from engine.spark.options import ExecutorOptions
    from engine.spark.reading import spark_schema_of
    from engine.table.model import TableSchema

    n, rng = args.rows, np.random.default_rng(1)
    micros = (1.7e15 - rng.exponential(3e13, n)).astype(np.int64)
    table = pa.table({"g": pa.array(np.zeros(n, np.int32)),
                      "t": pa.array(micros.astype("datetime64[us]")),
                      "price": pa.array(rng.normal(0, 1e3, n))})
    pq.write_table(table, args.path)
    spark = SparkSession.builder.master(args.master).config("spark.ui.enabled", "false").getOrCreate()
    df = spark.read.schema(spark_schema_of(table.schema)).parquet(args.path) \
        .withColumn(GROUP_COLUMN, F.col("g"))
    schema = TableSchema(tuple((f.name, logical_types.logical_type_of_arrow(f.type))
                               for f in table.schema))
    spec = GroupSpec(0, PlanGroup((), "hilbert", ("t", "price")), [], n, 0)
    fitting.fit_group(spec, df.sample(0.02, seed=1).toArrow(), schema, 1000)
    bounds = [c["boundaries"] for c in spec.ordering_json["state"]["codecs"]]
    print(f"{n:,} rows; boundaries {[len(b) for b in bounds]}; bucket_fits "
          f"{curve_keys.bucket_fits(bounds)}; auto takes {curve_keys.chosen([spec], schema, 'auto')}")
    for name, how, bucketed in (("buckets", "expression", True),
                                ("binary search", "expression", False), ("UDF", "udf", True)):
        t0 = time.perf_counter()
        keyed = fitting.with_key(df, [spec], schema, "long", key_function=how,
                                 options=ExecutorOptions(bucketed=bucketed)).select(KEY_COLUMN)
        built = time.perf_counter() - t0
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            keyed.write.format("noop").mode("overwrite").save()
            runs.append(time.perf_counter() - t0)
        print(f"{name:>14}: build {built:.2f} s, runs {runs[0]:.2f} s and {runs[1]:.2f} s")
    spark.stop()


if __name__ == "__main__":
    main()
