"""The executor's sort of three tables of the same rows in ONE Spark session, side by side:
``calibrate``'s table (every column nullable, round 9), round 8's calibration table (NOT
NULL columns: every rewrite pays the type-restoring pass) and the executor bench's table
(``bench/bench_executor.py``). Why the calibration priced the bench's 10M-row plan +53%
(bench/README_executor.md, "Round 9: the calibrated prediction"): wall, executor CPU and
the executor's laps (``restore_types`` is the pass), medians of ``--repeat`` runs after a
warm-up, interleaved. Usage (locked, a few minutes at 1.6M):
``PYTHONPATH=$PWD python bench/calibration_table_probe.py --rows 1600000 --repeat 2``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_executor import make_files  # noqa: E402
from engine.core.config import Settings  # noqa: E402
from engine.spark import calibrate  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402
from engine.table.footers import read_partitions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_600_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    spark = get_spark(Settings(spark_master="local[2]", spark_shuffle_partitions=8))
    work = Path(tempfile.mkdtemp(prefix="cal-table-probe-"))
    try:
        n = args.rows
        tables = {  # name: (input files, rows per output file)
            "calibrate (nullable)": (calibrate._make_files(spark, str(work / "cal"), n), 50_000),
            "round 8 (NOT NULL)": (calibrate._make_files(spark, str(work / "nn"), n,
                                                         nullable=False), 50_000),
            "bench": (make_files(work / "bench", n, n // 50), 100_000)}
        parsed = {k: (*read_partitions(p), per) for k, (p, per) in tables.items()}
        runs: dict[str, list[dict]] = {k: [] for k in parsed}
        for rep in range(args.repeat + 1):  # the first is the warm-up
            for name, (schema, parts, per) in parsed.items():
                wall, run = calibrate.timed_rewrite(spark, schema, parts, str(work / f"out-{rep}"),
                                                    rows_per_file=per)
                print(f"  rep {rep} {name}: {wall:.2f} s, CPU {run.measured['executor_cpu_seconds']:.2f}"
                      f" s, laps {run.phases}", flush=True)
                if rep:
                    runs[name].append({"wall": wall, "cpu": run.measured["executor_cpu_seconds"],
                                       "restore": run.phases.get("restore_types", 0.0)})
        for name, rs in runs.items():
            print(f"{name:<22} {n:,} rows: wall {statistics.median(r['wall'] for r in rs):.2f} s, "
                  f"executor CPU {statistics.median(r['cpu'] for r in rs):.2f} s, restore_types "
                  f"{statistics.median(r['restore'] for r in rs):.2f} s (median of {len(rs)})")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
