"""Real replay: does the simulator's policy ranking hold on real files?

A reduced scenario (default: TPC-H preset, two periods of 12 monthly batches, P1 the
initial pool, reclustering in P2) is run twice per policy:

* by the simulator (:func:`engine.whatif.simulate.simulate_scenario`; DD tuned to WAIR's
  reclustering budget by its grid search), giving modelled bytes;
* on real files (:func:`engine.replay.runner.replay_scenario`): Spark ingestion through the
  table layer, reclustering by the Spark executor, each query of the measured period run
  by DuckDB over exactly the files that survive zonemap pruning. DD runs with the
  parameters the simulator's tuning chose.

Writes ``bench/replay/results.csv`` (one row per policy) and, in ``--out``,
``real_replay_batches.csv`` (per policy and batch, simulated beside real).

Usage::

    .venv/bin/python bench/replay/real_replay.py --rows 200000          # ~5 minutes on 2 cores
    .venv/bin/python bench/replay/real_replay.py --rows 1000000 --policies nr,nn,dd,wair
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from engine.replay.runner import (STAGING_TABLE, form_query_seconds, ingest_all,  # noqa: E402
                                  ranks, repeat_queries, replay_scenario, with_file_widths)
from engine import api  # noqa: E402
from engine.whatif.simulate import (COLD_START_MODES, DEFAULT_COLD_START,  # noqa: E402
                                 SHORT_HISTORY, simulate_scenario)
from engine.policy import pricing  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.policy.registry import LABELS, WAIR_FAMILY  # noqa: E402
from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.driver import HISTORY_LIMIT  # noqa: E402
from engine.sim.variants import scenario_policy  # noqa: E402
from engine.spark.session import get_spark  # noqa: E402
from engine.workspace import Workspace  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results.csv"
#: the per-batch table
DETAILS = Path(tempfile.gettempdir()) / "bench-replay"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tpch", choices=["tpch", "dsb", "mirrors"])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--periods", type=int, default=2)
    ap.add_argument("--batches-per-period", type=int, default=12)
    ap.add_argument("--recluster-start", type=int, default=None,
                    help="first reclustering period (default: the last period)")
    ap.add_argument("--policies", default="nr,nn,dd,wair", help="the policies replayed")
    ap.add_argument("--simulate", default="nr,nn,dd,wair",
                    help="the policies simulated (with --policies): DD's tuning needs WAIR, so a "
                         "replay split by policy still simulates all of them")
    ap.add_argument("--simulate-only", action="store_true",
                    help="only simulate (kept in --workdir for the replay pieces that follow), "
                         "no Spark: the CPU work to do before taking the heavy-bench lock")
    ap.add_argument("--merge", nargs="+", default=None, metavar="CSV",
                    help="only merge real_replay.csv files of runs split by --policies (same "
                         "rows and seed) into --results, ranking across all of them")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--queries", default="measured", choices=["measured", "all", "none"],
                    help="batches whose queries DuckDB executes")
    ap.add_argument("--out", default=str(DETAILS), help="directory for the per-batch table")
    ap.add_argument("--results", default=str(RESULTS),
                    help="the results file, one row per policy (default bench/replay/results.csv; "
                         "a run split by --policies writes each piece's own, then --merge)")
    ap.add_argument("--workdir", default=None, help="workspace for the replayed tables (default: a temp dir)")
    ap.add_argument("--duckdb-threads", type=int, default=1,
                    help="DuckDB threads per query (default 1: calibrate measures the query rate on one)")
    ap.add_argument("--query-form", action="store_true",
                    help="also fit DuckDB's time for the replay's query form on the unmeasured period's "
                         "queries and print the simulator's prediction with it (queries priced in "
                         "the form they run, outside the measured period)")
    ap.add_argument("--query-repeat", type=int, default=1, metavar="K",
                    help="run each batch's queries K times (a table read many times between "
                         "loads; default 1: the generator's 16 queries per batch)")
    ap.add_argument("--ingest-only", action="store_true",
                    help="only ingest every batch into --workdir's staging table (Spark), for "
                         "--calibrate-queries and the replay pieces that follow")
    ap.add_argument("--calibrate-queries", default=None, metavar="OUT",
                    help="after --ingest-only: measure calibrate's query terms (engine.api."
                         "calibrate_queries) on the staging table's files of the unmeasured "
                         "period and that period's queries (the table's log before the measured "
                         "period); write --calibration with them to OUT, for --calibration OUT")
    ap.add_argument("--calibrate-rewrite", default=None, metavar="OUT",
                    help="after --ingest-only: measure the replay table's own rewrite price per "
                         "cell (engine.api.calibrate_rewrite, `calibrate --rewrite-on`) on the "
                         "staging table's files of the unmeasured period, up to "
                         "--rewrite-max-rows; write --calibration with it (tables."
                         f"{STAGING_TABLE}) to OUT, for --calibration OUT: the simulator and "
                         "the policies then price the replay's rewrites with it")
    ap.add_argument("--cold-start", choices=COLD_START_MODES, default=DEFAULT_COLD_START,
                    help="when a simulated rewrite pays the calibration's cold_start_s "
                         "(engine.sim.session): first (default: each policy's replay runs in "
                         "one Spark session), every, none")
    ap.add_argument("--rewrite-max-rows", type=int, default=None, metavar="N",
                    help="the largest sample of --calibrate-rewrite (default 1,600,000 rows)")
    ap.add_argument("--rewrite-fit", choices=pricing.FITS, default=None,
                    help="the fit --calibrate-rewrite stores as the table's price (`calibrate "
                         "--fit`): line (default: the table's own fixed part and price per "
                         "cell) or cell; both are stored")
    ap.add_argument("--rewrite-warmup", type=int, default=None, metavar="N",
                    help="untimed warm-up runs of --calibrate-rewrite (default 3)")
    ap.add_argument("--rewrite-repeat", type=int, default=None, metavar="N",
                    help="rounds of --calibrate-rewrite, the median kept (default 3)")
    ap.add_argument("--file-widths", action="store_true",
                    help="simulate with each column's bytes per row measured on the workdir's "
                         "ingested files (their footers) instead of the preset's widths, which "
                         "are 16%% below the TPC-H replay's files; needs the ingestion "
                         "(--ingest-only) first")
    ap.add_argument("--calibration", default=None,
                    help="a workspace's calibration.json (layout-advisor calibrate): the simulator "
                         "and the policies price with it, so the simulated seconds predict the "
                         "measured ones")
    args = ap.parse_args(argv)

    if args.merge:
        return merge(args.merge, Path(args.results))
    names = [p.strip().lower() for p in args.policies.split(",") if p.strip()]
    simulated = list(dict.fromkeys([p.strip().lower() for p in args.simulate.split(",") if p.strip()]
                                   + names))
    overrides = {"periods": args.periods, "batches_per_period": args.batches_per_period,
                 "recluster_start": args.recluster_start or args.periods}
    workdir = args.workdir or tempfile.mkdtemp(prefix="real_replay-")
    if args.calibration:  # in the replay's workspace: load_settings merges its rates and terms
        os.makedirs(os.path.join(workdir, "home"), exist_ok=True)
        shutil.copy(args.calibration, os.path.join(workdir, "home", "calibration.json"))
    scenario = repeat_queries(build_scenario(args.preset, rows=args.rows, seed=args.seed,
                                             overrides=overrides), args.query_repeat)
    # the replayed tables' file size is the scenario's; the policies count a plan's output
    # files (file_s each) with settings.target_rows, so it must be the tables' own
    settings = load_settings({"home": os.path.join(workdir, "home"), "spark_master": "local[2]",
                              "spark_shuffle_partitions": 4,
                              "target_rows": int(scenario.spec.target_rows)})
    if not args.calibrate_rewrite:
        # every replayed table holds the staging table's rows, so all are priced
        # at its own price per cell when the calibration has one (--calibrate-rewrite)
        settings, price = pricing.apply(settings, STAGING_TABLE)
        print(f"rewrites priced at {settings.rewrite_cell_bytes:.3f} B per cell, fixed "
              f"{settings.rewrite_fixed_s:.2f} s per job: "
              f"{pricing.describe(price, settings)['label']}", flush=True)
    summary = scenario.summary()
    print(f"scenario {args.preset}: {summary['rows']:,} rows, {summary['batches']} batches, "
          f"{summary['queries']} queries, target {summary['target_rows']} rows per file", flush=True)

    if args.ingest_only or args.calibrate_queries or args.calibrate_rewrite:
        # no simulation: Spark ingestion only (reused when the workdir has it)
        spark = get_spark(settings)
        t0 = time.perf_counter()
        files = ingest_all(settings, scenario, spark, workdir, store=Workspace(settings).tables)
        print(f"ingested {sum(len(v) for v in files.values())} files in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        if args.calibrate_queries:
            early = [b for b in scenario.batches if not b.measured]
            t0 = time.perf_counter()
            cal = api.calibrate_queries(settings, paths=[p for b in early for p in files[b.index]],
                                        fragments=[f for b in early for f in b.fragments],
                                        out=args.calibrate_queries,
                                        label=f"the replay's table, batches 1-{len(early)}")
            print(f"query terms in {time.perf_counter() - t0:.1f} s: "
                  f"{json.dumps(cal['queries']['rates'])} -> {cal['path']}", flush=True)
        if args.calibrate_rewrite:
            early = [b for b in scenario.batches if not b.measured]
            t0 = time.perf_counter()
            got = api.calibrate_rewrite(
                settings, paths=[p for b in early for p in files[b.index]], name=STAGING_TABLE,
                repeat=args.rewrite_repeat, max_rows=args.rewrite_max_rows, out=args.calibrate_rewrite,
                spark=spark, target_rows=int(scenario.spec.target_rows), fit=args.rewrite_fit,
                warmup=args.rewrite_warmup, progress=lambda m: print(m, flush=True))
            print(f"rewrite price in {time.perf_counter() - t0:.1f} s: "
                  f"{got['rewrite_cell_bytes']:.3f} B per cell"
                  + (f" + fixed {got['rewrite_fixed_s']:.2f} s" if got.get("rewrite_fixed_s")
                     is not None else "")
                  + f", {got['fit']} fit (the calibration table's "
                  f"{got['calibration_cell_bytes']:.3f}); points "
                  f"{[(p['rows'], p['seconds'], p['cpu_s'], p['error_at_fit']) for p in got['points']]}; "
                  f"fits {json.dumps(got['fits'])}; load {got['load']} max {got['load_max']}"
                  f"{'; fallback: ' + got['fit_fallback'] if got.get('fit_fallback') else ''} "
                  f"-> {got['path']}", flush=True)
            if got.get("busy"):
                print(got["busy"], file=sys.stderr, flush=True)
        return 0
    widths: dict[str, float] = {}
    sim_scenario = scenario  # the replay itself generates (or reuses) the preset's data
    if args.file_widths:
        sim_scenario, widths = with_file_widths(scenario, workdir)
        if not widths:
            print(f"--file-widths: {workdir} holds no ingestion yet; run --ingest-only first",
                  file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    sim_runs, tuning = simulated_runs(settings, sim_scenario, simulated, args, workdir, widths)
    sim_seconds = time.perf_counter() - t0
    print(f"simulated in {sim_seconds:.1f} s", flush=True)
    sim = {n: r.totals() for n, r in sim_runs.items()}
    if args.simulate_only:
        for n in simulated:
            t = sim[n]
            print(f"  {n}: {t['query_cpu_seconds']:.1f} s queries + {t['recluster_cpu_seconds']:.1f} s "
                  f"reclustering = {t['cpu_seconds']:.1f} s; {t['total_bytes'] / 1e6:,.1f} MB")
        return 0
    params = {"dd": dict(tuning["chosen"])} if tuning else {}

    spark = get_spark(settings)
    policies = {n: scenario_policy(n, scenario, params.get(n)) for n in names}
    history = {n: (HISTORY_LIMIT if n in WAIR_FAMILY else SHORT_HISTORY) for n in names}
    t0 = time.perf_counter()
    real = replay_scenario(settings, scenario, policies, spark, workdir, history=history,
                           store=Workspace(settings).tables,
                           queries=args.queries, duckdb_threads=args.duckdb_threads,
                           query_form=args.query_form,
                           progress=lambda e: print(
                               f"  batch {e['batch']}/{e['batches']} at {time.perf_counter() - t0:.0f} s "
                               f"(Spark ingestion {e['ingest_seconds']:.0f} s)", flush=True))
    replay_seconds = time.perf_counter() - t0
    print(f"replayed in {replay_seconds:.1f} s", flush=True)
    for n in names:  # where the replay's time went
        rec = real[n]
        ph = {k: round(v, 1) for k, v in sorted(rec.phases.items())}
        print(f"  {n}: executor {sum(r.seconds for r in rec.reclusters + rec.uncharged):.1f} s, "
              f"decisions {rec.decision_seconds:.1f} s, {ph}, Spark ingestion (shared) "
              f"{rec.ingest_seconds:.1f} s", flush=True)

    rt = {n: real[n].totals() for n in names}
    sim_scanned = {n: sum(b.partitions_scanned for b in sim_runs[n].batches if b.measured) for n in names}
    rows: list[dict[str, Any]] = []
    for n in names:
        s, r = sim[n], rt[n]
        real_secs = r["query_wall_seconds"] + r["recluster_wall_seconds"]
        rows.append({
            "preset": args.preset, "rows": scenario.dataset.rows, "periods": args.periods,
            "query_repeat": args.query_repeat,
            "seed": args.seed, "policy": n, "label": LABELS.get(n, n),
            "params": json.dumps(params.get(n, {})),
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
            "real_total_bytes": round(r["query_bytes"] + r["recluster_bytes"]),
            "real_total_seconds": round(real_secs, 2),
            "ingest_seconds_shared": round(real[n].ingest_seconds, 1),
            "sim_query_seconds": round(s["query_cpu_seconds"], 2),
            "sim_recluster_seconds": round(s["recluster_cpu_seconds"], 2),
            "sim_total_seconds": round(s["cpu_seconds"], 2),  # query + recluster, priced
            "sim_recluster_runs": int(sum(1 for b in sim_runs[n].batches
                                          if b.measured and b.recluster_bytes_read > 0)),
            "sim_vs_real_seconds": round(s["cpu_seconds"] / real_secs - 1, 3) if real_secs else "",
            # the footer-only probe per file scanned added on top (probe_file_seconds);
            # calibrate's query_file_s is already in sim_total_seconds, so this counts a
            # per-file term twice: a comparison only
            "sim_partitions_scanned": int(sim_scanned[n]),
            "probe_query_file_s": round(real[n].file_probe[1], 6),
            "sim_total_seconds_with_files": round(s["cpu_seconds"] + sim_scanned[n] * real[n].file_probe[1], 2),
            "sim_files_vs_real_seconds": round((s["cpu_seconds"] + sim_scanned[n] * real[n].file_probe[1])
                                               / real_secs - 1, 3) if real_secs else "",
        })
        form = real[n].query_form
        if form:
            ms = [b for b in sim_runs[n].batches if b.measured]
            q_form = form_query_seconds(form, sum(b.queries for b in ms), sum(b.partitions_scanned for b in ms),
                                        sum(b.query_bytes for b in ms))
            total = q_form + s["recluster_cpu_seconds"]
            rows[-1].update({"form_fixed_s": round(form["fixed_s"], 5), "form_file_s": round(form["file_s"], 6),
                             "form_bytes_per_s": round(form["bytes_per_s"]),
                             "sim_query_seconds_form": round(q_form, 2),
                             "sim_total_seconds_form": round(total, 2),
                             "sim_form_vs_real_seconds": round(total / real_secs - 1, 3) if real_secs else ""})
    rank_rows(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with Path(args.results).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with (out / "real_replay_batches.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["policy", "period", "batch", "measured", "sim_query_bytes", "real_query_bytes",
                    "sim_partitions_scanned", "real_files_scanned", "sim_recluster_bytes",
                    "real_recluster_bytes", "real_query_wall_seconds", "real_recluster_wall_seconds",
                    "sim_query_seconds", "sim_recluster_seconds", "real_recluster_groups",
                    "real_recluster_cpu_seconds", "real_recluster_memory_spilled",
                    "real_recluster_disk_spilled"])
        for n in names:
            for b in sim_runs[n].batches:
                qs = [q for q in real[n].queries if q.batch == b.index]
                rs = [x for x in real[n].reclusters if x.batch == b.index]
                w.writerow([n, b.period, b.batch, b.measured, round(b.query_bytes),
                            round(sum(q.zonemap_bytes for q in qs)), b.partitions_scanned,
                            sum(q.files_scanned for q in qs), round(b.recluster_bytes),
                            sum(x.bytes_read + x.bytes_written for x in rs),
                            round(sum(q.wall_seconds for q in qs), 3), round(sum(x.seconds for x in rs), 2),
                            round(b.query_cpu_s, 3), round(b.recluster_cpu_s, 2),
                            sum(x.groups for x in rs), round(sum(x.cpu_seconds for x in rs), 2),
                            sum(x.memory_spilled for x in rs), sum(x.disk_spilled for x in rs)])
    print_summary(rows)
    print_form(rows)
    print(json.dumps({"sim_seconds": round(sim_seconds, 1), "replay_seconds": round(replay_seconds, 1),
                      "workdir": workdir, "dd_tuning": tuning and tuning.get("chosen")}))
    return 0


def simulated_runs(settings: Any, scenario: Any, simulated: list[str], args: argparse.Namespace,
                   workdir: str, widths: dict[str, float] | None = None
                   ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The simulation of ``simulated`` (and DD's tuning), kept in the workdir so that a replay
    split by policy simulates once; keyed by everything it depends on (``widths``: the
    files' own, ``--file-widths``; ``--cold-start``; and a tag of the simulator's version,
    to be changed when the simulator's figures change, so that a cached simulation is never
    returned by code that would simulate otherwise)."""
    cal = Path(args.calibration).read_bytes() if args.calibration else b""
    key = hashlib.sha256(json.dumps([args.preset, args.rows, args.seed, args.periods,
                                     args.batches_per_period, args.recluster_start, simulated,
                                     int(settings.target_rows), "sim-r10", args.cold_start]
                                    + ([args.query_repeat] if args.query_repeat > 1 else [])
                                    + ([sorted(widths.items())] if widths else [])
                                    ).encode() + cal).hexdigest()[:16]
    path = Path(workdir) / f"sim-{key}.pkl"
    if path.exists():
        with path.open("rb") as fh:
            return pickle.load(fh)
    got = simulate_scenario(settings, scenario, simulated, cold_start=args.cold_start)
    with path.open("wb") as fh:
        pickle.dump(got, fh)
    return got


def rank_rows(rows: list[dict[str, Any]]) -> None:
    """Set the rank columns across ``rows`` (1 = cheapest): simulated bytes, real bytes (zonemaps
    and DuckDB's io), simulated seconds and measured seconds."""
    def col(key: str) -> dict[str, float]:
        return {r["policy"]: float(r[key]) for r in rows}
    duck = {r["policy"]: float(r["real_query_duckdb_bytes"]) + float(r["real_recluster_bytes"]) for r in rows}
    for key, values in (("rank_sim", col("sim_total_bytes")), ("rank_real_bytes", col("real_total_bytes")),
                        ("rank_real_duckdb_bytes", duck), ("rank_real_seconds", col("real_total_seconds")),
                        ("rank_sim_seconds", col("sim_total_seconds"))):
        rk = ranks(values)
        for r in rows:
            r[key] = rk[r["policy"]]
    if all(r.get("sim_total_seconds_form") not in (None, "") for r in rows):
        rk = ranks(col("sim_total_seconds_form"))
        for r in rows:
            r["rank_sim_seconds_form"] = rk[r["policy"]]
    if all(r.get("sim_total_seconds_with_files") not in (None, "") for r in rows):
        rk = ranks(col("sim_total_seconds_with_files"))
        for r in rows:
            r["rank_sim_seconds_with_files"] = rk[r["policy"]]


def print_summary(rows: list[dict[str, Any]]) -> None:
    """One line per policy: simulated beside measured, the error and the ranks."""
    print(f"{'policy':8} {'sim total':>12} {'real bytes':>12} {'sim q s':>8} {'real q s':>8} "
          f"{'sim r s':>8} {'real r s':>8} {'sim s':>8} {'real s':>8} {'error':>6} "
          "ranks sim/bytes/duck/sim s/real s")
    for r in rows:
        err = r["sim_vs_real_seconds"]
        print(f"{r['label']:8} {int(r['sim_total_bytes']):12,} {int(r['real_total_bytes']):12,} "
              f"{float(r['sim_query_seconds']):8.1f} {float(r['real_query_wall_seconds']):8.1f} "
              f"{float(r['sim_recluster_seconds']):8.1f} {float(r['real_recluster_wall_seconds']):8.1f} "
              f"{float(r['sim_total_seconds']):8.1f} {float(r['real_total_seconds']):8.1f} "
              f"{float(err) * 100 if err != '' else 0:+5.0f}% {r['rank_sim']}/{r['rank_real_bytes']}/"
              f"{r['rank_real_duckdb_bytes']}/{r['rank_sim_seconds']}/{r['rank_real_seconds']}")
    if all("rank_sim_seconds_with_files" in r for r in rows):
        print("with the footer probe per file added on top (counts files twice since "
              "calibrate prices them; a comparison only):")
        for r in rows:
            err = r["sim_files_vs_real_seconds"]
            print(f"{r['label']:8} sim s {float(r['sim_total_seconds_with_files']):8.1f} "
                  f"({int(r['sim_partitions_scanned']):,} files x {float(r['probe_query_file_s']) * 1e3:.3f} ms) "
                  f"real s {float(r['real_total_seconds']):8.1f} "
                  f"{float(err) * 100 if err != '' else 0:+5.0f}% rank sim {r['rank_sim_seconds_with_files']}"
                  f" / real {r['rank_real_seconds']}")


def print_form(rows: list[dict[str, Any]]) -> None:
    """The simulator's prediction with the queries priced by the replay's own query form."""
    if not all("rank_sim_seconds_form" in r for r in rows):
        return
    r0 = rows[0]
    print(f"with the query form fitted on the unmeasured period ({float(r0['form_fixed_s']) * 1e3:.2f} ms "
          f"+ {float(r0['form_file_s']) * 1e3:.3f} ms/file + {float(r0['form_bytes_per_s']) / 1e6:,.0f} MB/s):")
    for r in rows:
        err = r["sim_form_vs_real_seconds"]
        print(f"{r['label']:8} sim q s {float(r['sim_query_seconds_form']):7.1f} real q s "
              f"{float(r['real_query_wall_seconds']):7.1f}  sim s {float(r['sim_total_seconds_form']):8.1f} "
              f"real s {float(r['real_total_seconds']):8.1f} {float(err) * 100 if err != '' else 0:+5.0f}% "
              f"rank sim {r['rank_sim_seconds_form']} / real {r['rank_real_seconds']}")


def merge(paths: list[str], out: Path) -> int:
    """Merge the results of runs split by ``--policies`` (one scenario: same preset, rows,
    periods and seed) into ``out`` and rank across them."""
    rows: list[dict[str, Any]] = []
    for p in paths:
        with open(p, newline="") as fh:
            rows.extend(csv.DictReader(fh))
    keys = {(r["preset"], r["rows"], r["periods"], r.get("seed")) for r in rows}
    if len(keys) != 1:
        print(f"error: the files hold different scenarios {sorted(keys)}; merge runs of one scenario",
              file=sys.stderr)
        return 2
    rows = list({r["policy"]: r for r in rows}.values())
    rank_rows(rows)
    with out.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print_summary(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
