"""Real replay (issue 5 section 4): does the simulator's policy ranking hold on real files?

A reduced scenario (default: TPC-H preset, two periods of 12 monthly batches, P1 the
initial pool, reclustering in P2) is run twice per policy:

* by the simulator (:func:`engine.api.simulate.simulate_scenario`; DD tuned to WAIR's
  reclustering budget by its grid search), giving modelled bytes;
* on real files (:func:`bench.real_replay.replay.replay_scenario`): Spark ingestion through the
  table layer, reclustering by the Spark executor, each query of the measured period run
  by DuckDB over exactly the files that survive zonemap pruning. DD runs with the
  parameters the simulator's tuning chose.

Writes ``bench/results/real_replay.csv`` (one row per policy) and
``bench/results/real_replay_batches.csv`` (per policy and batch, simulated beside real).

Usage::

    .venv/bin/python -m bench.real_replay --rows 200000          # ~5 minutes on 2 cores
    .venv/bin/python -m bench.real_replay --rows 1000000 --policies nr,nn,dd,wair
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.real_replay.replay import ranks, replay_scenario  # noqa: E402
from engine.api.simulate import SHORT_HISTORY, simulate_scenario  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.policy.registry import LABELS, WAIR_FAMILY  # noqa: E402
from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.driver import HISTORY_LIMIT  # noqa: E402
from engine.sim.variants import scenario_policy  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tpch", choices=["tpch", "dsb", "mirrors"])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--periods", type=int, default=2)
    ap.add_argument("--batches-per-period", type=int, default=12)
    ap.add_argument("--recluster-start", type=int, default=None,
                    help="first reclustering period (default: the last period)")
    ap.add_argument("--policies", default="nr,nn,dd,wair")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--queries", default="measured", choices=["measured", "all", "none"],
                    help="batches whose queries DuckDB executes")
    ap.add_argument("--out", default=str(RESULTS), help="directory for the CSV files")
    ap.add_argument("--workdir", default=None, help="workspace for the replayed tables (default: a temp dir)")
    ap.add_argument("--calibration", default=None,
                    help="a workspace's calibration.json (layout-advisor calibrate): the simulator "
                         "and the policies price with it, so the simulated seconds predict the "
                         "measured ones")
    args = ap.parse_args(argv)

    names = [p.strip().lower() for p in args.policies.split(",") if p.strip()]
    overrides = {"periods": args.periods, "batches_per_period": args.batches_per_period,
                 "recluster_start": args.recluster_start or args.periods}
    workdir = args.workdir or tempfile.mkdtemp(prefix="real_replay-")
    if args.calibration:  # in the replay's workspace: load_settings merges its rates and terms
        os.makedirs(os.path.join(workdir, "home"), exist_ok=True)
        shutil.copy(args.calibration, os.path.join(workdir, "home", "calibration.json"))
    settings = load_settings({"home": os.path.join(workdir, "home"), "spark_master": "local[2]",
                              "spark_shuffle_partitions": 4})
    scenario = build_scenario(args.preset, rows=args.rows, seed=args.seed, overrides=overrides)
    summary = scenario.summary()
    print(f"scenario {args.preset}: {summary['rows']:,} rows, {summary['batches']} batches, "
          f"{summary['queries']} queries, target {summary['target_rows']} rows per file", flush=True)

    t0 = time.perf_counter()
    sim_runs, tuning = simulate_scenario(settings, scenario, names)
    sim_seconds = time.perf_counter() - t0
    print(f"simulated in {sim_seconds:.1f} s", flush=True)
    sim = {n: r.totals() for n, r in sim_runs.items()}
    params = {"dd": dict(tuning["chosen"])} if tuning else {}

    spark = get_spark(settings)
    policies = {n: scenario_policy(n, scenario, params.get(n)) for n in names}
    history = {n: (HISTORY_LIMIT if n in WAIR_FAMILY else SHORT_HISTORY) for n in names}
    t0 = time.perf_counter()
    real = replay_scenario(settings, scenario, policies, spark, workdir, history=history,
                           queries=args.queries,
                           progress=lambda e: print(f"  batch {e['batch']}/{e['batches']}", flush=True))
    replay_seconds = time.perf_counter() - t0
    print(f"replayed in {replay_seconds:.1f} s", flush=True)

    rt = {n: real[n].totals() for n in names}
    sim_total = {n: sim[n]["total_bytes"] for n in names}
    real_bytes = {n: rt[n]["query_bytes"] + rt[n]["recluster_bytes"] for n in names}
    real_secs = {n: rt[n]["query_wall_seconds"] + rt[n]["recluster_wall_seconds"] for n in names}
    real_duck = {n: rt[n]["query_duckdb_bytes"] + rt[n]["recluster_bytes"] for n in names}
    sim_secs = {n: sim[n]["cpu_seconds"] for n in names}  # query + recluster, priced
    rk_sim, rk_bytes, rk_secs, rk_duck = ranks(sim_total), ranks(real_bytes), ranks(real_secs), ranks(real_duck)
    rk_sim_secs = ranks(sim_secs)
    rows: list[dict[str, Any]] = []
    for n in names:
        s, r = sim[n], rt[n]
        rows.append({
            "preset": args.preset, "rows": scenario.dataset.rows, "periods": args.periods,
            "policy": n, "label": LABELS.get(n, n), "params": json.dumps(params.get(n, {})),
            "queries": int(r["queries"]),
            "sim_query_bytes": round(s["query_bytes"]), "sim_recluster_bytes": round(s["recluster_bytes"]),
            "sim_total_bytes": round(s["total_bytes"]), "sim_partitions_rewritten": s["partitions_rewritten"],
            "real_query_bytes": round(r["query_bytes"]), "real_query_files": int(r["query_files"]),
            "real_query_duckdb_bytes": round(r["query_duckdb_bytes"]),
            "real_query_duckdb_seconds": round(r["query_duckdb_seconds"], 3),
            "real_query_wall_seconds": round(r["query_wall_seconds"], 3),
            "real_recluster_bytes": round(r["recluster_bytes"]),
            "real_recluster_wall_seconds": round(r["recluster_wall_seconds"], 2),
            "real_recluster_runs": int(r["recluster_runs"]),
            "real_partitions_rewritten": int(r["recluster_partitions"]),
            "real_total_bytes": round(real_bytes[n]), "real_total_seconds": round(real_secs[n], 2),
            "rank_sim": rk_sim[n], "rank_real_bytes": rk_bytes[n], "rank_real_duckdb_bytes": rk_duck[n],
            "rank_real_seconds": rk_secs[n],
            "ingest_seconds_shared": round(real[n].ingest_seconds, 1),
            "sim_query_seconds": round(s["query_cpu_seconds"], 2),
            "sim_recluster_seconds": round(s["recluster_cpu_seconds"], 2),
            "sim_total_seconds": round(sim_secs[n], 2),
            "sim_vs_real_seconds": round(sim_secs[n] / real_secs[n] - 1, 3) if real_secs[n] else "",
            "rank_sim_seconds": rk_sim_secs[n],
        })
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "real_replay.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with (out / "real_replay_batches.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["policy", "period", "batch", "measured", "sim_query_bytes", "real_query_bytes",
                    "sim_partitions_scanned", "real_files_scanned", "sim_recluster_bytes",
                    "real_recluster_bytes", "real_query_wall_seconds", "real_recluster_wall_seconds"])
        for n in names:
            for b in sim_runs[n].batches:
                qs = [q for q in real[n].queries if q.batch == b.index]
                rs = [x for x in real[n].reclusters if x.batch == b.index]
                w.writerow([n, b.period, b.batch, b.measured, round(b.query_bytes),
                            round(sum(q.zonemap_bytes for q in qs)), b.partitions_scanned,
                            sum(q.files_scanned for q in qs), round(b.recluster_bytes),
                            sum(x.bytes_read + x.bytes_written for x in rs),
                            round(sum(q.wall_seconds for q in qs), 3), round(sum(x.seconds for x in rs), 2)])
    print(f"{'policy':8} {'sim total':>12} {'real bytes':>12} {'sim s':>8} {'real s':>8} "
          f"{'error':>6} ranks sim/bytes/duck/sim s/real s")
    for r in rows:
        err = r["sim_vs_real_seconds"]
        print(f"{r['label']:8} {r['sim_total_bytes']:12,} {r['real_total_bytes']:12,} "
              f"{r['sim_total_seconds']:8.1f} {r['real_total_seconds']:8.1f} "
              f"{err * 100 if err != '' else 0:+5.0f}% {r['rank_sim']}/{r['rank_real_bytes']}/"
              f"{r['rank_real_duckdb_bytes']}/{r['rank_sim_seconds']}/{r['rank_real_seconds']}")
    print(json.dumps({"sim_seconds": round(sim_seconds, 1), "replay_seconds": round(replay_seconds, 1),
                      "workdir": workdir, "dd_tuning": tuning and tuning.get("chosen")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
