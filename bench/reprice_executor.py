"""Re-price executor bench results with a calibration file, offline (no Spark).

``bench/bench_executor.py --calibration`` prints the prediction of the calibration it was
given; this re-prices the same measured runs (a results CSV) with another calibration or
another version of the model, from the bench's plan shapes: how round 7 separated the
model's unit (cells vs compressed bytes) from the calibration's noise
(bench/README_executor.md, "Round 7: prediction"). Usage:
``PYTHONPATH=$PWD python bench/reprice_executor.py H/calibration.json bench/results/X.csv``
(``--bytes`` prices compressed bytes, the model before round 7; ``--refit`` fits the rates
and layout terms again from the calibration's measured points and demo-shaped probe with
today's code, e.g. round 8's relative-error weighting on round 7's points).

``--plan HOME ID`` prices a stored plan of workspace HOME with HOME's calibration (the
policies' own :func:`engine.policy.costmodel.groups_rewrite_cost` at the table's file target,
as ``plan create`` would have stored it) beside its measured wall time once it has run: the
demo's WAIR plan is made before calibrating, because a calibrated WAIR proposes nothing on
the demo (bench/README_executor.md, round 8).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.core.config import Settings  # noqa: E402
from engine.policy.costmodel import RewriteTerms, sized_rewrite_cost  # noqa: E402
from engine.spark.calibrate import rates_from_points, terms_from_points  # noqa: E402

#: the bench's table: 6 columns; its demo-like files (2,000 rows) hold 16.74 B per row
COLUMNS, DEMO_ROW_BYTES, ROWS_PER_FILE = 6, 16.74, 100_000


def shapes(rows: int, nbytes: float) -> dict[str, tuple[list[tuple[str, float, float]], int]]:
    """Each variant's groups (layout, rows, bytes) and output files, as the bench runs them."""
    demo_rows = [16_000] * 4 + [12_000, 10_000]
    demo = [("sort" if i < 4 else "hilbert", r, r * DEMO_ROW_BYTES)
            for i, r in enumerate(demo_rows)]
    files = max(1, rows // ROWS_PER_FILE)
    per_group = -(-rows // 50 // ROWS_PER_FILE)  # each of 50 groups: at least one file
    return {"executor-sort": ([("sort", rows, nbytes)], files),
            "executor-hilbert": ([("hilbert", rows, nbytes)], files),
            "executor-50-groups": ([("sort", rows / 50, nbytes / 50)] * 50, 50 * per_group),
            "executor-demo-like": (demo, 43)}


def predict(calibration: dict, groups: list[tuple[str, float, float]], files: int,
            cells: bool = True) -> float:
    """The model's wall seconds of one plan under ``calibration``."""
    rates = {k: v for k, v in calibration["rates"].items()
             if v and (cells or k != "rewrite_cell_bytes")}
    terms = RewriteTerms.from_mapping(calibration.get("terms"))
    per = [files / len(groups)] * len(groups)
    return sized_rewrite_cost([(r, b) for _, r, b in groups], COLUMNS, Settings(**rates),
                              [k for k, _, _ in groups], per, terms).cpu_seconds


def refit(calibration: dict) -> dict:
    """The calibration with its rates and terms fitted again from its own measurements."""
    terms = terms_from_points(calibration["points"], calibration.get("demo_probe"))
    return {**calibration, "terms": terms,
            "rates": rates_from_points(calibration["points"], terms["file_s"])}


def price_plan(home: str, plan_id: int, fit: str | None = None) -> tuple[float, str]:
    """The calibrated price (seconds, warm) of a stored plan, and a line with it and its
    cold figure (warm + ``cold_start_s``: a fresh session's first rewrite, round 9) beside
    its stored (creation-time) price and its measured wall time, compared with the figure
    that matches the run's session (``measured.fresh_session``; a run before round 9 did not
    record it: compared warm). ``fit``: one of the table's stored fits ("cell", "line")
    in place of its chosen one (round 10, tablefit10: both side by side)."""
    from engine.core import table_price
    from engine.core.config import load_settings
    from engine.plans.plan import PlanBook
    from engine.policy.costmodel import for_table, groups_rewrite_cost
    from engine.table.store import TableStore

    settings = load_settings({"home": home})
    plan = PlanBook(settings).get(plan_id)
    store = TableStore(settings)
    info = store.info(plan.table)
    zm = store.snapshot(plan.table, plan.base_snapshot).zonemaps()
    # round 10: at the table's own price per cell when `calibrate --rewrite-on` stored one
    # (engine.core.table_price), beside the calibration table's price
    own, price = table_price.apply(settings, plan.table, fit)
    cost = groups_rewrite_cost(zm, plan.groups, for_table(own, info.target_rows,
                                                          info.target_bytes))
    cal = groups_rewrite_cost(zm, plan.groups, for_table(settings, info.target_rows,
                                                         info.target_bytes))
    cold = cost.cpu_seconds + settings.cold_start_s
    index = {str(p): i for i, p in enumerate(zm.paths)}
    rows = int(sum(zm.rows[index[p]] for p in plan.partitions if p in index))
    line = (f"plan {plan_id}: {len(plan.partitions)} partitions, {rows:,} rows, groups "
            f"{', '.join(f'{g.layout} x {len(g.partitions)}' for g in plan.groups)}; "
            f"calibrated prediction {cost.cpu_seconds:.2f} s warm, {cold:.2f} s in a fresh "
            f"session, at {own.rewrite_cell_bytes:.3f} B per cell "
            f"({table_price.describe(price, own)['label']}"
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
    ap.add_argument("calibration", nargs="?")
    ap.add_argument("results", nargs="*")
    ap.add_argument("--plan", nargs=2, metavar=("HOME", "ID"),
                    help="price stored plan ID of workspace HOME with HOME's calibration")
    ap.add_argument("--bytes", action="store_true", help="price compressed bytes (before round 7)")
    ap.add_argument("--refit", action="store_true",
                    help="fit the calibration's rates and terms again with today's code")
    args = ap.parse_args()
    if args.plan:
        print(price_plan(args.plan[0], int(args.plan[1]))[1])
        return 0
    if not args.calibration or not args.results:
        ap.error("give a calibration and one or more results CSVs, or --plan HOME ID")
    calibration = json.loads(Path(args.calibration).read_text())
    if args.refit:
        calibration = refit(calibration)
        print("refitted terms: " + ", ".join(f"{k} {v:.4g}" for k, v in
                                             calibration["terms"].items()))
    for path in args.results:
        for row in csv.DictReader(open(path)):
            shape = shapes(int(row["rows"]), float(row["input_mb"]) * 1e6).get(row["variant"])
            if shape is None:
                continue
            p, m = predict(calibration, *shape, cells=not args.bytes), float(row["median_s"])
            print(f"{row['variant']:<20} {int(row['rows']):>11,} rows  measured {m:7.2f} s  "
                  f"predicted {p:7.2f} s ({p / m - 1:+.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
