"""``layout-advisor simulate``: replay a generated scenario against reclustering policies.

Text output is a summary table (bytes, CPU-seconds, pruning rate, reduction against NR);
``--json`` prints the full result of :func:`engine.api.simulate`; ``--out DIR`` also writes
``summary.csv`` and ``batches.csv`` (one row per policy and batch).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from engine import api
from engine.cli.args import non_negative_int, number, positive, positive_int
from engine.cli.output import add_json_flag, emit
from engine.core.fmt import format_seconds


def _mb(n: float) -> str:
    """Bytes as decimal megabytes, as the WAIR paper's tables report them."""
    return f"{n / 1e6:,.1f}"


def summary_text(result: Mapping[str, Any]) -> str:
    """The scenario in one line, then one row per policy with its reductions against NR."""
    sc = result["scenario"]
    head = (f"{result['preset']}: {sc['rows']:,} rows, {sc['batches']} batches in {len(sc['periods'])} periods, "
            f"{sc['queries']} queries, partitions of {sc['target_rows']} rows (seed {result['seed']})")
    cols = ("policy", "query MB", "recluster MB", "total MB", "CPU-s", "pruning", "vs NR (bytes)", "vs NR (CPU)")
    rows = []
    for name, p in result["policies"].items():
        c = result["comparison"].get(name, {})
        red_b = c.get("total_bytes_reduction_vs_nr")
        red_c = c.get("cpu_reduction_vs_nr")
        rows.append((p.get("label", name), _mb(p["query_bytes"]), _mb(p["recluster_bytes"]),
                     _mb(p["total_bytes"]), f"{p['cpu_seconds']:.2f}", f"{p['pruning_rate']:.1%}",
                     "-" if red_b is None else f"{red_b:+.1%}", "-" if red_c is None else f"{red_c:+.1%}"))
    widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]

    def line(r: Sequence[Any]) -> str:
        return "  ".join(str(v).rjust(w) if i else str(v).ljust(w)
                         for i, (v, w) in enumerate(zip(r, widths)))

    out = [head, "", line(cols), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]
    cold = cold_start_line(result)
    if cold:
        out += ["", cold]
    if result.get("dd_tuning"):
        out.append("")
        out.append(f"DD tuned to WAIR's reclustering budget: {result['dd_tuning']['chosen']}")
    return "\n".join(out)


def cold_start_line(result: Mapping[str, Any]) -> str:
    """What the reclustering CPU-seconds include of the Spark session's cold start, per
    policy (nothing when the run priced none).

    >>> cold_start_line({"cold_start": "first", "rates": {"cold_start_s": 11.3},
    ...                  "policies": {"wair": {"label": "WAIR", "cold_start_seconds": 11.3},
    ...                               "nr": {"label": "NR", "cold_start_seconds": 0.0}}})
    ... # doctest: +NORMALIZE_WHITESPACE
    "CPU-s include a fresh Spark session's cold start (11.3 s, the first rewrite of each
    policy's run: --cold-start first): WAIR 11.3 s, NR 0 ms"
    """
    start = float((result.get("rates") or {}).get("cold_start_s") or 0.0)
    mode = result.get("cold_start", "none")
    if start <= 0 or mode == "none":
        return ""
    which = {"first": "the first rewrite of each policy's run", "every": "every rewrite"}[mode]
    per = ", ".join(f"{p.get('label', n)} {format_seconds(float(p.get('cold_start_seconds') or 0.0))}"
                    for n, p in result["policies"].items())
    return (f"CPU-s include a fresh Spark session's cold start ({format_seconds(start)}, {which}: "
            f"--cold-start {mode}): {per}")


def write_csvs(result: Mapping[str, Any], out: Path) -> list[Path]:
    """``summary.csv`` (one row per policy) and ``batches.csv`` (per policy and batch)."""
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "summary.csv"
    keys = ["query_bytes", "recluster_bytes", "total_bytes", "pruning_rate", "query_cpu_seconds",
            "recluster_cpu_seconds", "cold_start_seconds", "cpu_seconds", "money", "queries",
            "partitions_rewritten"]
    with summary.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["preset", "policy", "label", *keys, "total_bytes_reduction_vs_nr", "cpu_reduction_vs_nr"])
        for name, p in result["policies"].items():
            c = result["comparison"].get(name, {})
            w.writerow([result["preset"], name, p.get("label", name), *[p[k] for k in keys],
                        c.get("total_bytes_reduction_vs_nr"), c.get("cpu_reduction_vs_nr")])
    batches = out / "batches.csv"
    bkeys = ["period", "batch", "index", "measured", "queries", "partitions", "query_bytes", "recluster_bytes",
             "total_bytes", "pruning_rate", "partitions_scanned", "partitions_pruned", "partitions_rewritten",
             "cpu_seconds", "query_cpu_seconds", "recluster_cpu_seconds", "cold_start_seconds", "money",
             "uncharged_bytes"]
    with batches.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["preset", "policy", *bkeys, "query_bytes_by_workload", "layouts"])
        for name, p in result["policies"].items():
            for b in p.get("batches", []):
                w.writerow([result["preset"], name, *[b[k] for k in bkeys],
                            json.dumps(b["query_bytes_by_workload"]), json.dumps(b["layouts"])])
    return [summary, batches]


def _json_object(text: str) -> dict:
    """``--overrides``: a JSON object, or argparse's one-line error."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not a JSON object ({exc.msg} at column "
                                         f"{exc.colno})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {text!r}")
    return value


def _run(args: argparse.Namespace, ws: "api.Workspace") -> int:
    overrides = dict(args.overrides or {})
    for key in ("periods", "batches_per_period", "recluster_start", "shifting_rate", "distribution",
                "distribution_param", "selectivity", "target_rows"):
        v = getattr(args, key, None)
        if v is not None:
            overrides[key] = v

    def progress(info: Mapping[str, Any]) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{info['policy']:>10}: batch {info['batch']}/{info['batches']}", end="",
                  file=sys.stderr, flush=True)

    result = api.simulate(ws, preset=args.preset, rows=args.rows, policies=args.policies,
                          seed=args.seed, overrides=overrides or None, progress=progress,
                          act_every=args.act_every, feedback=args.feedback,
                          calibrated=not args.configured_rates, cold_start=args.cold_start)
    if not args.json and sys.stderr.isatty():
        print("", file=sys.stderr)
    if args.out:
        paths = write_csvs(result, Path(args.out))
        (Path(args.out) / "result.json").write_text(json.dumps(result, indent=1, default=str))
        if not args.json:
            print(f"wrote {', '.join(str(p) for p in paths)}")
    emit(args, result, summary_text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    presets = [p["name"] for p in api.list_presets()]
    policies = [p["name"] for p in api.simulation_policies()]
    p = sub.add_parser("simulate", help="what-if: replay a generated workload against reclustering policies",
                       description="Replay a scenario (WAIR section 6 presets) against policies over an "
                                   "in-memory table and compare their query and reclustering costs.")
    p.add_argument("--preset", choices=presets, default="tpch")
    p.add_argument("--rows", type=positive_int, default=None, help="total rows ingested (default: the preset's)")
    p.add_argument("--policies", default=",".join(api.DEFAULT_SIMULATION_POLICIES),
                   help=f"comma-separated, of: {', '.join(policies)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--periods", type=positive_int)
    p.add_argument("--batches-per-period", dest="batches_per_period", type=positive_int)
    p.add_argument("--recluster-start", dest="recluster_start", type=non_negative_int,
                   help="first period in which policies may recluster")
    p.add_argument("--shifting-rate", dest="shifting_rate", type=number(low=0, high=1))
    p.add_argument("--distribution", choices=("uniform", "gaussian", "zipf", "distinct"))
    p.add_argument("--distribution-param", dest="distribution_param", type=number())
    p.add_argument("--selectivity", type=positive, help="query window length (days; IPs for mirrors)")
    p.add_argument("--target-rows", dest="target_rows", type=positive_int, help="rows per partition")
    p.add_argument("--overrides", type=_json_object, help="JSON object of further scenario parameters")
    p.add_argument("--act-every", dest="act_every", choices=("batch", "query"), default="batch")
    p.add_argument("--feedback", choices=("batch", "window"), default="batch",
                   help="when policies learn realized savings: after the next batch (extrapolated "
                        "to their window) or after their whole window of queries")
    p.add_argument("--configured-rates", dest="configured_rates", action="store_true",
                   help="price queries and rewrites with the workspace's rates instead of the "
                        "preset's DuckDB-measured economics (bench/sim/README.md)")
    p.add_argument("--cold-start", dest="cold_start", choices=api.COLD_START_MODES,
                   default=api.DEFAULT_COLD_START,
                   help="which rewrites pay the calibrated cold start of a fresh Spark session "
                        "(cold_start_s): the first of each policy's run (one long-lived session, "
                        "as the dashboard and the real replay run; the default), every plan (a "
                        "CLI `plan run` per plan) or none (the paper's model); the presets' "
                        "DuckDB economics have none, so it matters with --configured-rates")
    p.add_argument("--out", help="directory for summary.csv, batches.csv and result.json")
    add_json_flag(p)
    p.set_defaults(func=_run)
