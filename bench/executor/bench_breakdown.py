"""Where a Spark rewrite's time goes: the executor's steps one by one on the same rows, each
measured by the machine CPU seconds of the whole process tree (this driver, Spark's JVM,
its Python workers, DuckDB's threads: what a loaded machine disturbs least) and by wall
seconds, beside pyarrow alone and DuckDB's ``COPY ... ORDER BY``.

Steps (each a Spark job writing to the ``noop`` sink unless it says Parquet; every step
includes the ones above it):

* ``scan``: read the 50 input files; ``+hash``: the verification's row hash (xxhash64 of
  every column) summed, as the inputs' observation does; ``+shuffle``: the range shuffle
  to the write's tasks; ``+sort``: the sort within each task; ``+parquet``: Spark's Parquet
  writer (the bare ``orderBy`` rewrite without the range's sampling job);
  ``arrow-crossing``: scan + shuffle + every row to a Python task in Arrow batches, nothing
  written; ``verify-read``: the written files read back and hashed (the verification's
  aggregate);
* ``pyarrow``: read, sort, take and write the same rows in one Python process (no Spark);
  ``duckdb``: ``COPY (SELECT * ... ORDER BY l_shipdate) TO ... (FORMAT parquet)``.

Usage: ``.venv/bin/python bench/executor/bench_breakdown.py --rows 1000000``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_executor import make_files, tree_cpu  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2, help="best of N after a warm-up")
    args = ap.parse_args()
    import duckdb
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from engine.core.config import Settings
    from engine.spark.session import get_spark

    work = Path(tempfile.mkdtemp(prefix="bench-breakdown-"))
    try:
        paths = make_files(work / "input", args.rows, args.rows // 50)
        spark = get_spark(Settings(spark_master="local[2]", spark_shuffle_partitions=4))
        cols = ["l_orderkey", "l_orderdate", "l_shipdate", "l_commitdate", "l_quantity",
                "l_comment"]

        def frame(hashed: bool = False, shuffled: bool = False, ordered: bool = False):
            df = spark.read.parquet(*paths)
            if hashed:
                h = F.xxhash64(*[F.col(c) for c in cols])
                df = df.withColumn("h", h).observe(
                    f"o{time.time_ns()}", F.sum(F.shiftright(h, 32)), F.count(F.lit(1))).drop("h")
            if shuffled:
                df = df.repartitionByRange(4, "l_shipdate")
            if ordered:
                df = df.sortWithinPartitions("l_shipdate")
            return df

        def noop(df):
            df.write.format("noop").mode("overwrite").save()

        def arrow_crossing():
            def task(batches):
                n = sum(b.num_rows for b in batches)
                import pyarrow as pa
                yield pa.RecordBatch.from_pydict({"n": [n]})
            frame(True, True).mapInArrow(task, "n long").collect()

        written = str(work / "written")
        frame(True, True, True).write.mode("overwrite").parquet(written)

        def verify_read():
            df = spark.read.parquet(written)
            h = F.xxhash64(*[F.col(c) for c in cols])
            df.agg(F.count(F.lit(1)), F.sum(F.shiftright(h, 32))).collect()

        def pyarrow_alone():
            table = pq.read_table(paths)
            table = table.take(pc.sort_indices(table, sort_keys=[("l_shipdate", "ascending")]))
            step = max(1, len(table) // 10)
            for i in range(0, len(table), step):
                pq.write_table(table.slice(i, step), str(work / f"pa-{i}.parquet"))

        def duck():
            files = ", ".join(f"'{p}'" for p in paths)
            duckdb.connect().execute(
                f"COPY (SELECT * FROM read_parquet([{files}]) ORDER BY l_shipdate) "
                f"TO '{work}/duck.parquet' (FORMAT parquet)")

        steps = {
            "scan": lambda: noop(frame()),
            "+hash": lambda: noop(frame(True)),
            "+shuffle": lambda: noop(frame(True, True)),
            "+sort": lambda: noop(frame(True, True, True)),
            "+parquet": lambda: frame(True, True, True).write.mode("overwrite")
            .parquet(str(work / "out")),
            "arrow-crossing": arrow_crossing,
            "verify-read": verify_read,
            "pyarrow": pyarrow_alone,
            "duckdb": duck,
        }
        for fn in steps.values():  # warm-up: JIT, Python workers
            fn()
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for name, fn in steps.items():
                t, c = time.perf_counter(), tree_cpu()
                fn()
                got = (tree_cpu() - c, time.perf_counter() - t)
                best[name] = min(best.get(name, got), got)
        duck_cpu = best["duckdb"][0]
        print(f"{args.rows:,} rows; best of {args.repeat}; machine CPU s (x DuckDB's), wall s")
        for name, (cpu, wall) in best.items():
            print(f"  {name:<15} cpu {cpu:6.2f} (x{cpu / duck_cpu:5.1f})  wall {wall:6.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
