"""A stored plan's rewrite timed in ONE Spark session, cold then warm, beside its calibrated
price: the check of issue 11's "predicted within ±30% on the demo plan" in a warm session
(bench/README_executor.md, round 8). ``plan run`` from the CLI starts its own JVM, so its
first job pays the JIT and Python workers (35 s against 4 s warm at load 3-5 on the sample
demo's plan); the calibration times warm jobs. Nothing is committed: the plan's groups are
rewritten into a scratch folder (rewrite + the new footers, as ``execute_plan`` does), so the
plan may have run already (its input files stay until ``table gc``). Usage:
``PYTHONPATH=$PWD python bench/demo_plan_warm.py HOME PLAN_ID [--repeat 3]``, HOME holding
the calibration to price with. Round 9: with a calibrated cold start, the cold run is also
compared with the cold prediction (warm + ``cold_start_s``); the first run here is the
process's first Spark job, as a CLI ``plan run``'s is. Round 10 (tablefit10): when the
table has its own price (``calibrate --rewrite-on``), the plan is priced with each of its
stored fits ("cell", "line") side by side, against the same measured runs.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.core import table_price  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.plans.plan import PlanBook  # noqa: E402
from engine.spark import footers_parallel  # noqa: E402
from engine.spark.executor import rewrite  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402
from engine.table.store import TableStore  # noqa: E402
from reprice_executor import price_plan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("home")
    ap.add_argument("plan", type=int)
    ap.add_argument("--repeat", type=int, default=3, help="warm runs after the cold one")
    args = ap.parse_args()
    settings = load_settings({"home": args.home})
    plan = PlanBook(settings).get(args.plan)
    store = TableStore(settings)
    info = store.info(plan.table)
    snap = store.snapshot(plan.table, plan.base_snapshot)
    by_path = {p.path: p for p in snap.partitions}
    pairs = [(g, [by_path[p] for p in g.partitions]) for g in plan.groups]
    spark = get_spark(settings)
    times = []
    for i in range(1 + args.repeat):
        out = tempfile.mkdtemp(prefix="demo-plan-warm-")
        t = time.perf_counter()
        run = rewrite(spark, snap.schema, pairs, out, info.target_rows, info.target_bytes)
        for g in run.groups:
            footers_parallel.read_partitions(spark, g.files, schema=snap.schema)
        times.append(time.perf_counter() - t)
        shutil.rmtree(out, ignore_errors=True)
        print(f"{'cold' if i == 0 else 'warm'} run {i + 1}: {times[-1]:.2f} s wall, executor "
              f"CPU {run.measured['executor_cpu_seconds']:.2f} s, "
              f"{sum(g.outputs for g in run.groups)} files; phases "
              f"{ {k: round(v, 2) for k, v in run.phases.items()} }", flush=True)
    warm = statistics.median(times[1:]) if len(times) > 1 else times[0]
    entry = table_price.stored_tables(args.home).get(plan.table) or {}
    fits = [None] + sorted(entry.get("fits") or {})  # the chosen one, then each stored fit
    for fit in fits:
        predicted, line = price_plan(args.home, args.plan, fit)
        tag = "" if fit is None else f"[{fit} fit] "
        print(tag + line)
        print(f"{tag}cold {times[0]:.2f} s; warm median {warm:.2f} s; calibrated prediction "
              f"{predicted:.2f} s: {predicted / warm - 1:+.0%} of the warm median")
        if settings.cold_start_s:  # round 9: the cold figure, against the session's first run
            cold = predicted + settings.cold_start_s
            print(f"{tag}cold prediction {cold:.2f} s (warm + cold start "
                  f"{settings.cold_start_s:.2f} s): {cold / times[0] - 1:+.0%} of the cold run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
