"""Executor benchmark: one-job plan rewrites vs a bare Spark orderBy rewrite vs DuckDB.

All variants rewrite the SAME Parquet files (a lineitem-like table in ingestion order, 50
input files), in the same process and Spark session (a warm-up run first, then
``--repeat`` timed runs each, interleaved; medians reported):

* ``executor-sort``      engine.spark.executor.rewrite: one group, sort on ``l_shipdate``
                         (zonemap cuts, one shuffle, Spark's writer cuts files, one
                         verification aggregate), then the new footers (zonemaps);
* ``executor-hilbert``   the same, Hilbert over (l_shipdate, l_commitdate) (+1 sample job),
                         the key by the default ``ExecutorOptions.key_function`` ("auto": for
                         two dates, native Spark expressions by lookup tables);
* ``executor-hilbert-udf`` the same plan with the key by the scalar Arrow UDF
                         (``ExecutorOptions(key_function="udf")``), beside it in the same run;
* ``executor-hilbert-expression`` the same plan with ``key_function="expression"``;
* ``executor-50-groups`` a plan of 50 groups (one input file each, alternating sort keys),
                         written "packed" (the default: (group, key) as one long per row);
* ``executor-50-groups-partition-by`` the same plan sorted by (group, key) for Spark's
                         ``partitionBy`` writer (``ExecutorOptions(group_write="partition_by")``);
* ``executor-50-groups-packed`` the same plan with ``group_write="packed"`` named explicitly;
* ``executor-50-groups-path-verify`` the same plan verified with each written row's group
  from its file's path (``ExecutorOptions(verify_from_folder=False)``; the default reads it
  from Spark's group folders);
* ``executor-demo-like`` the demo plan's shape: 43 files of 2,000 rows in 6 groups (4 sort,
                         2 Hilbert), as many output files;
* ``executor-demo-one-group`` the sample demo's plan's shape: the same 43 files in ONE sort
                         group, files of 2,000 rows (below ``slicing.MIN_SLICE_ROWS``: one
                         task, 43 files);
* ``executor-<plan>-spark`` / ``executor-<plan>-arrow`` (plan: sort, hilbert, 50-groups,
                         demo-like) the plan with ``ExecutorOptions(writer=...)``: Spark's
                         sort and Parquet writer, or an Arrow sort and pyarrow's files per
                         task (:mod:`engine.spark.arrow_write`), side by side;
* ``spark-orderby``      spark.read.parquet(...).orderBy(l_shipdate).write.parquet (shuffle
                         partitions = output files, nothing verified);
* ``duckdb-sort``        DuckDB COPY (SELECT * ... ORDER BY l_shipdate) TO one Parquet file.

Each variant's machine CPU seconds (:func:`tree_cpu`: the driver, Spark's JVM, its Python
workers and DuckDB's threads) are printed and stored beside its wall time, and both are
compared with ``duckdb-sort`` when it runs.

``--calibration FILE`` (a workspace's calibration.json) adds the calibrated prediction of
each executor variant's wall time beside the measured median, twice: the bytes-only model
(rates refitted from the file's points without the layout terms) and the full model
(:func:`engine.policy.costmodel.sized_rewrite_cost` with the stored layout terms: fitted
job, key function, per output file, per group; priced per cell when the calibration has a
cell size, as the policies price plans). Usage:
``.venv/bin/python bench/executor/bench_executor.py --rows 1000000``. Writes
bench/executor/results.csv (one row per variant, overwritten).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "helpers"))

import duckdb  # noqa: E402

from engine.core.config import Settings  # noqa: E402
from engine.policy.base import PlanGroup  # noqa: E402
from engine.policy.costmodel import RewriteTerms, sized_rewrite_cost  # noqa: E402
from engine.spark.calibrate_fit import rates_from_points  # noqa: E402
from engine.spark.calibrate_inputs import write_slices  # noqa: E402
from engine.spark import footers_parallel  # noqa: E402
from engine.spark.executor import rewrite  # noqa: E402
from engine.spark.options import ExecutorOptions  # noqa: E402
from engine.spark.progress import JobMetrics  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402
from engine.table.footers import read_partitions  # noqa: E402
from plan_helpers import lineitem_arrow  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results.csv"
#: the selectable many-group writes (``ExecutorOptions.group_write``), each a variant
#: ``executor-50-groups-<mode>`` beside the default ``executor-50-groups``
GROUP_WRITES = ("packed", "partition_by")
#: the selectable writers (``ExecutorOptions.writer``), each a variant
#: ``executor-<plan>-<writer>`` beside the default ``executor-<plan>``
WRITERS = ("arrow", "spark")


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and every live descendant (Spark's JVM,
    its Python workers and DuckDB's threads included; children already reaped count in
    their parent's ``cutime``): what a variant costs the machine, whoever runs it, and what
    a loaded machine disturbs least."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15]) / tick
    me, total = os.getpid(), 0.0
    for pid, seconds in times.items():
        p = pid
        while p and p != me:
            p = parent.get(p, 0)
        if p == me:
            total += seconds
    return total


#: whole process-tree CPU seconds of each variant's timed runs (:func:`tree_cpu`)
TREE_CPU: dict[str, list[float]] = {}


def make_files(root: Path, rows: int, rows_per_file: int) -> list[str]:
    return write_slices(lineitem_arrow(rows, seed=5), root, rows_per_file)


#: Spark jobs of the last run of each executor variant (Spark's status store)
JOBS: dict[str, int] = {}
#: output files of the last run of each executor variant (what the plan's targets give)
FILES: dict[str, int] = {}
#: seconds per step of each executor variant's runs (the executor's own laps: fit,
#: order_write, restore_types, verify; + footers, the new files' footers read after it)
#: and ``cpu``, the executor CPU seconds of its Spark jobs (Spark's task metrics: what a
#: loaded machine disturbs least; also for spark-orderby)
PHASES: dict[str, list[dict[str, float]]] = {}


def run_executor(spark, schema, groups, out: str, rows_per_file: int, name: str = "",
                 options: ExecutorOptions = ExecutorOptions()) -> None:
    """One plan: ``groups`` = [(layout, columns, partitions)], one job (with ``options``),
    then the footers."""
    pairs = [(PlanGroup(tuple(p.path for p in parts), layout, tuple(cols)), parts)
             for layout, cols, parts in groups]
    t0 = time.perf_counter()
    result = rewrite(spark, schema, pairs, out, rows_per_file, None, options=options)
    t1 = time.perf_counter()
    JOBS[name] = result.measured["spark_jobs"]
    FILES[name] = sum(g.outputs for g in result.groups)
    for g in result.groups:
        footers_parallel.read_partitions(spark, g.files, schema=schema)
    laps = {**result.phases, "setup": round(t1 - t0 - sum(result.phases.values()), 3),
            "footers": round(time.perf_counter() - t1, 3),
            "cpu": result.measured["executor_cpu_seconds"]}
    PHASES.setdefault(name, []).append(laps)


def run_with(options: ExecutorOptions, spark, schema, groups, out: str, rows_per_file: int,
             name: str) -> None:
    """:func:`run_executor` with one of the executor's selectable ways beside the default,
    e.g. ``ExecutorOptions(key_function="udf")`` or ``ExecutorOptions(group_write=
    "partition_by")``."""
    run_executor(spark, schema, groups, out, rows_per_file, name, options)


def median_phases(runs: list[dict[str, float]], warmup: bool) -> str:
    """Median seconds per step over the timed runs (the warm-up's laps dropped)."""
    timed = runs[1:] if warmup and len(runs) > 1 else runs
    keys = sorted({k for r in timed for k in r})
    return " ".join(f"{k}={statistics.median(r.get(k, 0.0) for r in timed):.2f}" for k in keys)


def predicted_seconds(calibration: dict, groups: list, files: int,
                      full: bool = True) -> float:
    """The calibrated model's wall time of one plan ``groups`` = [(layout, cols, parts)]
    writing ``files`` files: the full model, or (``full=False``) the bytes-only one."""
    rates = (calibration["rates"] if full
             else rates_from_points(calibration["points"]))  # no file correction
    settings = Settings(**{k: v for k, v in rates.items()  # bytes-only: compressed bytes
                           if v and (full or k != "rewrite_cell_bytes")})
    terms = RewriteTerms.from_mapping(calibration.get("terms")) if full else RewriteTerms()
    sizes = [(float(sum(p.rows for p in parts)), float(sum(p.bytes for p in parts)))
             for _, _, parts in groups]
    per_group = [files / len(groups)] * len(groups)  # only the sum is priced
    columns = len(groups[0][2][0].columns)  # a calibration with a cell size prices cells
    return sized_rewrite_cost(sizes, columns, settings, [k for k, _, _ in groups], per_group,
                              terms).cpu_seconds


def run_orderby(spark, paths, n_out: int, out: str) -> None:
    old = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(n_out))
    metrics = JobMetrics(spark, "bench-orderby")
    try:
        spark.read.parquet(*paths).orderBy("l_shipdate").write.mode("overwrite").parquet(out)
    finally:
        cpu = metrics.close()["executor_cpu_seconds"]
        spark.conf.set("spark.sql.shuffle.partitions", old)
    PHASES.setdefault("spark-orderby", []).append({"cpu": cpu})


def run_duckdb(paths, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    files = ", ".join(f"'{p}'" for p in paths)
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_parquet([{files}]) ORDER BY l_shipdate) "
                f"TO '{out}/sorted.parquet' (FORMAT parquet)")
    con.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rows-per-file", type=int, default=100_000, help="output file size")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="200k rows, 2 repeats")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--calibration", help="a workspace's calibration.json")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--variants", default="",
                    help="comma-separated variants to run (default: all); spark-orderby is "
                         "always kept, the ratios need it")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the untimed warm-up runs (a 10M-row run on a loaded machine)")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.rows_per_file, args.repeat = 200_000, 20_000, 2
    calibration = json.loads(Path(args.calibration).read_text()) if args.calibration else None

    work = Path(tempfile.mkdtemp(prefix="bench-executor-"))
    try:
        paths = make_files(work / "input", args.rows, args.rows // 50)
        schema, parts = read_partitions(paths)
        demo_paths = make_files(work / "demo", 86_000, 2_000)
        _, demo_parts = read_partitions(demo_paths)
        n_out = max(1, args.rows // args.rows_per_file)
        input_bytes = sum(p.bytes for p in parts)
        t0 = time.perf_counter()
        spark = get_spark(Settings(spark_master=args.master, spark_shuffle_partitions=8))
        print(f"spark up in {time.perf_counter() - t0:.1f} s; {args.rows:,} rows in "
              f"{len(paths)} files, {input_bytes / 1e6:.1f} MB", flush=True)
        fifty = [("sort", ["l_shipdate" if i % 2 else "l_commitdate"], [p])
                 for i, p in enumerate(parts)]
        demo = [("sort", ["l_shipdate"], demo_parts[i:i + 8]) for i in range(0, 32, 8)] + [
            ("hilbert", ["l_shipdate", "l_commitdate"], demo_parts[32:38]),
            ("hilbert", ["l_shipdate", "l_commitdate"], demo_parts[38:])]
        demo_one = [("sort", ["l_shipdate"], demo_parts)]  # the sample demo's plan's shape
        plans = {"executor-sort": [("sort", ["l_shipdate"], parts)],
                 "executor-demo-one-group": demo_one,
                 "executor-hilbert": [("hilbert", ["l_shipdate", "l_commitdate"], parts)],
                 "executor-hilbert-udf": [("hilbert", ["l_shipdate", "l_commitdate"], parts)],
                 "executor-hilbert-expression": [("hilbert", ["l_shipdate", "l_commitdate"], parts)],
                 "executor-50-groups": fifty, "executor-50-groups-path-verify": fifty,
                 **{f"executor-50-groups-{m.replace('_', '-')}": fifty for m in GROUP_WRITES},
                 "executor-demo-like": demo}
        plans.update({f"{k}-{w}": v for k, v in list(plans.items()) for w in WRITERS})
        variants = {
            "executor-sort": lambda out: run_executor(
                spark, schema, [("sort", ["l_shipdate"], parts)], out, args.rows_per_file,
                "executor-sort"),
            "executor-hilbert": lambda out: run_executor(
                spark, schema, [("hilbert", ["l_shipdate", "l_commitdate"], parts)], out,
                args.rows_per_file, "executor-hilbert"),
            "executor-hilbert-udf": lambda out: run_with(
                ExecutorOptions(key_function="udf"), spark, schema,
                [("hilbert", ["l_shipdate", "l_commitdate"], parts)], out,
                args.rows_per_file, "executor-hilbert-udf"),
            "executor-hilbert-expression": lambda out: run_with(
                ExecutorOptions(key_function="expression"), spark, schema,
                [("hilbert", ["l_shipdate", "l_commitdate"], parts)], out,
                args.rows_per_file, "executor-hilbert-expression"),
            "executor-50-groups": lambda out: run_executor(spark, schema, fifty, out,
                                                           args.rows_per_file, "executor-50-groups"),
            **{f"executor-50-groups-{mode.replace('_', '-')}": partial(
                run_with, ExecutorOptions(group_write=mode), spark, schema, fifty,
                rows_per_file=args.rows_per_file,
                name=f"executor-50-groups-{mode.replace('_', '-')}")
               for mode in GROUP_WRITES},
            "executor-demo-like": lambda out: run_executor(spark, schema, demo, out, 2_000,
                                                           "executor-demo-like"),
            "executor-demo-one-group": lambda out: run_executor(
                spark, schema, demo_one, out, 2_000, "executor-demo-one-group"),
            "executor-50-groups-path-verify": lambda out: run_with(
                ExecutorOptions(verify_from_folder=False), spark, schema, fifty, out,
                args.rows_per_file, "executor-50-groups-path-verify"),
            **{f"{name}-{writer}": partial(
                run_with, ExecutorOptions(writer=writer), spark, schema, plan,
                rows_per_file=size, name=f"{name}-{writer}")
               for writer in WRITERS for name, plan, size in (
                   ("executor-sort", plans["executor-sort"], args.rows_per_file),
                   ("executor-hilbert", plans["executor-hilbert"], args.rows_per_file),
                   ("executor-50-groups", fifty, args.rows_per_file),
                   ("executor-demo-like", demo, 2_000))},
            "spark-orderby": lambda out: run_orderby(spark, paths, n_out, out),
            "duckdb-sort": lambda out: run_duckdb(paths, out),
        }
        if args.variants:
            keep = {v.strip() for v in args.variants.split(",") if v.strip()} | {"spark-orderby"}
            unknown = keep - set(variants)
            if unknown:
                ap.error(f"--variants: unknown {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(variants)}")
            variants = {k: v for k, v in variants.items() if k in keep}
        # warm-up (JIT, Python workers): every variant once, untimed
        for name, fn in (() if args.no_warmup else variants.items()):
            fn(str(work / f"warm-{name}"))
            shutil.rmtree(work / f"warm-{name}", ignore_errors=True)
        times: dict[str, list[float]] = {k: [] for k in variants}
        for rep in range(args.repeat):
            for name, fn in variants.items():  # interleaved so load drifts hit all alike
                out = str(work / f"{name}-{rep}")
                t, c = time.perf_counter(), tree_cpu()
                fn(out)
                times[name].append(time.perf_counter() - t)
                TREE_CPU.setdefault(name, []).append(tree_cpu() - c)
                shutil.rmtree(out, ignore_errors=True)
                print(f"  rep {rep} {name}: {times[name][-1]:.2f} s", flush=True)
        base = statistics.median(times["spark-orderby"])
        best_base = min(times["spark-orderby"])
        rows_out = []
        for name, ts in times.items():
            med = statistics.median(ts)
            rows_out.append({"variant": name, "rows": args.rows, "files": n_out,
                             "input_mb": round(input_bytes / 1e6, 2),
                             "median_s": round(med, 3),
                             "runs_s": " ".join(f"{t:.2f}" for t in ts),
                             "best_s": round(min(ts), 3),
                             "ratio_vs_spark_orderby": round(med / base, 3),
                             "best_ratio_vs_spark_orderby": round(min(ts) / best_base, 3),
                             "mrows_per_s": round(args.rows / med / 1e6, 3),
                             "ratio_vs_duckdb": (round(med / statistics.median(
                                 times["duckdb-sort"]), 2) if "duckdb-sort" in times else ""),
                             "tree_cpu_s": round(statistics.median(TREE_CPU[name]), 2),
                             "tree_cpu_vs_duckdb": (round(statistics.median(TREE_CPU[name])
                                                          / statistics.median(
                                                              TREE_CPU["duckdb-sort"]), 2)
                                                    if "duckdb-sort" in times else ""),
                             "predicted_s": (round(predicted_seconds(
                                 calibration, plans[name], FILES[name]), 3)
                                 if calibration and name in plans else ""),
                             "predicted_bytes_only_s": (round(predicted_seconds(
                                 calibration, plans[name], FILES[name], full=False), 3)
                                 if calibration and name in plans else ""),
                             "phases_s": median_phases(PHASES[name], not args.no_warmup) if name in PHASES else ""})
        out_path = Path(args.out)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with open(out_path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows_out[0]))
            writer.writeheader()
            writer.writerows(rows_out)
        for r in rows_out:
            print(f"{r['variant']:<18} median {r['median_s']:>7.2f} s  x{r['ratio_vs_spark_orderby']:.2f}"
                  f"   best {r['best_s']:>7.2f} s  x{r['best_ratio_vs_spark_orderby']:.2f}"
                  f"  vs spark orderBy  ({r['runs_s']})"
                  + (f"  predicted {r['predicted_s']:.2f} s ({r['predicted_s'] / r['median_s'] - 1:+.0%})"
                     f", bytes-only {r['predicted_bytes_only_s']:.2f} s "
                     f"({r['predicted_bytes_only_s'] / r['median_s'] - 1:+.0%})"
                     if r["predicted_s"] != "" else "")
                  + (f"  x{r['ratio_vs_duckdb']:.2f} vs DuckDB, machine CPU "
                     f"{r['tree_cpu_s']:.2f} s (x{r['tree_cpu_vs_duckdb']:.2f})"
                     if r["ratio_vs_duckdb"] != "" else "")
                  + (f"  {JOBS[r['variant']]} Spark jobs, {FILES[r['variant']]} files"
                     if r["variant"] in JOBS else "")
                  + (f"  [{r['phases_s']}]" if r["phases_s"] else ""))
        cpu = {name: statistics.median(r["cpu"] for r in runs[(0 if args.no_warmup else 1):]
                                       or runs)
               for name, runs in PHASES.items() if name in times and "cpu" in runs[0]}
        if cpu.get("spark-orderby"):
            print("executor CPU s (Spark task metrics, median), against the bare orderBy's: "
                  + ", ".join(f"{k} {v:.2f} (x{v / cpu['spark-orderby']:.2f})"
                              for k, v in cpu.items()))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
