"""A stored plan's rewrite timed in ONE Spark session, cold then warm, beside its calibrated
price: is the plan's predicted time within ±30% of the measured one, warm and cold
(bench/executor/README.md)? ``plan run`` from the CLI starts its own JVM, so its first job
pays the JIT and the Python workers; the calibration times warm jobs and adds its
``cold_start_s`` for a fresh session. Nothing is committed: the plan's groups are rewritten
into a scratch folder (rewrite + the new footers, as ``execute_plan`` does), so the plan may
have run already (its input files stay until ``table gc``). The first run here is the
process's first Spark job, as a CLI ``plan run``'s is, and is compared with the cold
prediction. When the table has its own price (``calibrate --rewrite-on``), the plan is
priced with each of its stored fits ("cell", "line") side by side. Usage:
``PYTHONPATH=$PWD python bench/executor/demo_plan_warm.py HOME PLAN_ID [--repeat 3]``, HOME
holding the calibration to price with.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.policy import pricing  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.plans.plan import PlanBook  # noqa: E402
from engine.spark import footers_parallel  # noqa: E402
from engine.spark.executor import rewrite  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402
from engine.table.store import TableStore  # noqa: E402



def price_plan(home: str, plan_id: int, fit: str | None = None) -> tuple[float, str]:
    """The calibrated price (seconds, warm) of a stored plan, and a line with it and its
    cold figure (warm + ``cold_start_s``: a fresh session's first rewrite) beside its stored
    (creation-time) price and its measured wall time, compared with the figure that matches
    the run's session (``measured.fresh_session``; unrecorded: compared warm). ``fit``: one
    of the table's stored fits ("cell", "line") in place of its chosen one."""
    from engine.core.config import load_settings
    from engine.plans.plan import PlanBook
    from engine.policy.costmodel import for_table, groups_rewrite_cost
    from engine.table.store import TableStore

    settings = load_settings({"home": home})
    plan = PlanBook(settings).get(plan_id)
    store = TableStore(settings)
    target = store.write_target(plan.table)
    zm = store.snapshot(plan.table, plan.base_snapshot).zonemaps()
    # at the table's own price per cell when `calibrate --rewrite-on` stored one
    # (engine.policy.pricing), beside the calibration table's price
    own, price = pricing.apply(settings, plan.table, fit)
    cost = groups_rewrite_cost(zm, plan.groups, for_table(own, target))
    cal = groups_rewrite_cost(zm, plan.groups, for_table(settings, target))
    cold = cost.cpu_seconds + settings.cold_start_s
    index = {str(p): i for i, p in enumerate(zm.paths)}
    rows = int(sum(zm.rows[index[p]] for p in plan.partitions if p in index))
    line = (f"plan {plan_id}: {len(plan.partitions)} partitions, {rows:,} rows, groups "
            f"{', '.join(f'{g.layout} x {len(g.partitions)}' for g in plan.groups)}; "
            f"calibrated prediction {cost.cpu_seconds:.2f} s warm, {cold:.2f} s in a fresh "
            f"session, at {own.rewrite_cell_bytes:.3f} B per cell "
            f"({pricing.describe(price, own)['label']}"
            + (f"; the calibration table's {settings.rewrite_cell_bytes:.3f} B per cell: "
               f"{cal.cpu_seconds:.2f} s warm" if price else "")
            + f"); stored at creation {plan.proposal.estimated_cost.cpu_seconds:.2f} s")
    result = plan.result or {}
    seconds = result.get("seconds")
    if seconds:
        fresh = (result.get("measured") or {}).get("fresh_session")
        matching = cold if fresh else cost.cpu_seconds
        line += (f"; measured {seconds:.2f} s in a "
                 f"{'fresh' if fresh else 'warm' if fresh is False else 'unrecorded'} session "
                 f"({matching / seconds - 1:+.0%} of it)")
    return cost.cpu_seconds, line

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
        run = rewrite(spark, snap.schema, pairs, out, info.target_rows, info.target_bytes,
                      target=store.write_target(plan.table))
        for g in run.groups:
            footers_parallel.read_partitions(spark, g.files, schema=snap.schema)
        times.append(time.perf_counter() - t)
        shutil.rmtree(out, ignore_errors=True)
        print(f"{'cold' if i == 0 else 'warm'} run {i + 1}: {times[-1]:.2f} s wall, executor "
              f"CPU {run.measured['executor_cpu_seconds']:.2f} s, "
              f"{sum(g.outputs for g in run.groups)} files; phases "
              f"{ {k: round(v, 2) for k, v in run.phases.items()} }", flush=True)
    warm = statistics.median(times[1:]) if len(times) > 1 else times[0]
    entry = pricing.stored_tables(args.home).get(plan.table) or {}
    fits = [None] + sorted(entry.get("fits") or {})  # the chosen one, then each stored fit
    for fit in fits:
        predicted, line = price_plan(args.home, args.plan, fit)
        tag = "" if fit is None else f"[{fit} fit] "
        print(tag + line)
        print(f"{tag}cold {times[0]:.2f} s; warm median {warm:.2f} s; calibrated prediction "
              f"{predicted:.2f} s: {predicted / warm - 1:+.0%} of the warm median")
        if settings.cold_start_s:  # the cold figure, against the session's first run
            cold = predicted + settings.cold_start_s
            print(f"{tag}cold prediction {cold:.2f} s (warm + cold start "
                  f"{settings.cold_start_s:.2f} s): {cold / times[0] - 1:+.0%} of the cold run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
