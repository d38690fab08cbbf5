"""Replicate WAIR's evaluation (section 6) with the simulator: Figures 10, 11, 13, 16, 17-19.

Runs the three presets (``tpch``, ``dsb``, ``mirrors``) against NR, NN, QD, DD (tuned to
WAIR's reclustering budget), DD-EP, WAIR, its ablations (FK, FW, aggressive) and the
oracle, then the sensitivity studies on the TPC-H sensitivity profile (every period like
P4: ``l_shipdate``, 75% shifting, local workload). Writes its main tables to
``bench/sim/results.csv`` (end to end, Figure 19, its DSB counterpart, sensitivity), the detail tables
(``wair_*.csv``) to ``--out``, and the plots there as HTML (plotly; PNG needs kaleido, which is not installed here).

Usage::

    .venv/bin/python bench/sim/wair_replication.py --quick      # ~10 minutes on 2 cores
    .venv/bin/python bench/sim/wair_replication.py --rows 1000000

The numbers are bytes (platform independent) and CPU-seconds by the default rates of
``engine.core.config.Settings`` (scan 200 MB/s; sort-and-write 50 MB/s).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import plotly.graph_objects as go  # noqa: E402
from plotly.subplots import make_subplots  # noqa: E402

from engine.whatif.simulate import comparison, simulate_scenario  # noqa: E402
from engine.core.config import Settings  # noqa: E402
from engine.policy.registry import LABELS  # noqa: E402
from engine.scenarios.presets import build_scenario  # noqa: E402
from engine.sim.economics import calibrated_settings  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results.csv"
#: the detail tables, the figures (HTML) and the run's metadata
DETAILS = Path(tempfile.gettempdir()) / "bench-sim"
MAIN_POLICIES = ("nr", "nn", "qd", "dd", "dd-ep", "wair", "fk", "fw", "aggressive", "wair-static", "oracle")
SENS_POLICIES = ("nr", "nn", "qd", "dd", "wair", "wair-static")
PAPER = {"tpch": 0.611, "dsb": 0.603, "mirrors": 0.862}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in r.items()})


def write_table(path: Path, name: str, rows: Sequence[Mapping[str, Any]], by_preset: bool = False) -> None:
    """Table ``name`` of the folder's one results file: its rows replace that table's rows
    from an earlier run, the other tables' rows stay (a ``table`` column tells them apart).
    ``by_preset``: only the rows of the presets in ``rows`` are replaced (a run of some
    presets keeps the others' rows)."""
    kept: list[dict[str, Any]] = []
    presets = {str(r.get("preset")) for r in rows}
    if path.exists():
        with path.open(newline="") as fh:
            kept = [r for r in csv.DictReader(fh)
                    if r.get("table") != name or (by_preset and r.get("preset") not in presets)]
    write_csv(path, kept + [{"table": name, **r} for r in rows])


# ----------------------------------------------------------------------------- runs

def run_preset(preset: str, rows: int, seed: int, policies: Sequence[str], settings: Settings,
               overrides: Mapping[str, Any] | None = None, tune: bool = True,
               calibrated: bool = True) -> dict[str, Any]:
    sc = build_scenario(preset, rows=rows, seed=seed, overrides=overrides)
    if calibrated:  # the preset's DuckDB economics (engine.sim.economics)
        settings = calibrated_settings(sc, settings, preset)
    t0 = time.perf_counter()
    runs, tuning = simulate_scenario(settings, sc, policies, tune=tune)
    return {"scenario": sc, "runs": runs, "tuning": tuning, "comparison": comparison(runs),
            "seconds": time.perf_counter() - t0, "settings": settings}


def end_to_end_rows(preset: str, res: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, run in res["runs"].items():
        t = run.totals()
        c = res["comparison"][name]
        out.append({"preset": preset, "policy": name, "label": LABELS[name],
                    "query_bytes": t["query_bytes"], "recluster_bytes": t["recluster_bytes"],
                    "total_bytes": t["total_bytes"], "query_cpu_s": t["query_cpu_seconds"],
                    "recluster_cpu_s": t["recluster_cpu_seconds"], "cpu_s": t["cpu_seconds"],
                    "money": t["money"], "pruning_rate": t["pruning_rate"],
                    "query_bytes_global": t["query_bytes_by_workload"].get("global"),
                    "query_bytes_local": t["query_bytes_by_workload"].get("local"),
                    "bytes_reduction_vs_nr": c.get("total_bytes_reduction_vs_nr"),
                    "cpu_reduction_vs_nr": c.get("cpu_reduction_vs_nr"),
                    "recluster_share_cpu": c.get("recluster_share"),
                    "partitions_rewritten": t["partitions_rewritten"],
                    "decision_s": round(t["decision_seconds"], 2), "wall_s": round(t["wall_seconds"], 2)})
    return out


def batch_rows(preset: str, res: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, run in res["runs"].items():
        for b in run.batches:
            out.append({"preset": preset, "policy": name, "period": b.period, "batch": b.batch,
                        "index": b.index, "measured": b.measured, "query_bytes": b.query_bytes,
                        "recluster_bytes": b.recluster_bytes, "query_cpu_s": b.query_cpu_s,
                        "recluster_cpu_s": b.recluster_cpu_s, "pruning_rate": b.pruning_rate,
                        "partitions": b.partitions, "partitions_rewritten": b.recluster_partitions,
                        "layouts": b.recluster_layouts})
    return out


def oracle_gap_rows(res: Mapping[str, Any], policy: str = "wair") -> list[dict[str, Any]]:
    """Figure 19: cumulative (policy total CPU) / (oracle query CPU) - 1, per batch."""
    w, o = res["runs"][policy], res["runs"]["oracle"]
    cw = co = cr = 0.0
    out = []
    for bw, bo in zip(w.measured(), o.measured()):
        cw += bw.cpu_seconds
        cr += bw.recluster_cpu_s
        co += bo.query_cpu_s
        out.append({"period": bw.period, "batch": bw.batch, "index": bw.index,
                    "batch_gap": (bw.cpu_seconds / bo.query_cpu_s - 1) if bo.query_cpu_s else None,
                    "cumulative_gap": (cw / co - 1) if co else None,
                    "recluster_share": cr / cw if cw else 0.0})
    return out


def sensitivity(rows: int, seed: int, settings: Settings, quick: bool,
                only: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Figures 13 (a-c) and 16: one parameter at a time on the TPC-H sensitivity profile
    (``only``: these studies, e.g. ``("selectivity_days",)``; default all)."""
    base = {"profile": "sensitivity", "workload": "local"}
    if quick:
        base.update({"periods": 6, "batches_per_period": 6})
    studies: list[tuple[str, Any, dict[str, Any]]] = []
    for start in (2, 3, 4, 5):
        studies.append(("recluster_start", start, {"recluster_start": start, "measure_from_period": 5}))
    for rate in (0.25, 0.5, 0.75, 1.0):
        studies.append(("shifting_rate", rate, {"shifting_rate": rate, "recluster_start": 2}))
    for label, dist, param in (("U", "uniform", 0.0), ("G(2)", "gaussian", 2.0), ("Z(1)", "zipf", 1.0),
                               ("Z(2)", "zipf", 2.0), ("Z(3)", "zipf", 3.0)):
        studies.append(("skew", label, {"distribution": dist, "distribution_param": param, "recluster_start": 2}))
    for days in (15, 30, 61, 122, 244):
        studies.append(("selectivity_days", days, {"selectivity": float(days), "recluster_start": 2}))
    out = []
    for param, value, ov in studies:
        if only and param not in only:
            continue
        res = run_preset("tpch", rows, seed, SENS_POLICIES, settings, {**base, **ov}, tune=True)
        nr = res["runs"]["nr"].totals()
        for name, run in res["runs"].items():
            t = run.totals()
            out.append({"study": param, "value": value, "policy": name, "label": LABELS[name],
                        "pruning_rate": t["pruning_rate"], "total_bytes": t["total_bytes"],
                        "cpu_s": t["cpu_seconds"],
                        "total_bytes_vs_nr": t["total_bytes"] / nr["total_bytes"] if nr["total_bytes"] else None,
                        "cpu_vs_nr": t["cpu_seconds"] / nr["cpu_seconds"] if nr["cpu_seconds"] else None})
        log(f"sensitivity {param}={value} (pruning rate / CPU vs NR): " + ", ".join(
            f"{LABELS[n]} {r.totals()['pruning_rate']:.2f} / "
            f"{r.totals()['cpu_seconds'] / max(nr['cpu_seconds'], 1e-12):.2f}"
            for n, r in res["runs"].items()))
    return out


# ----------------------------------------------------------------------------- plots

def plots(e2e: list[dict], batches: list[dict], sens: list[dict], gap: list[dict], out: Path) -> list[Path]:
    written = []

    def save(fig: Any, name: str) -> None:
        path = out / f"{name}.html"
        fig.write_html(str(path), include_plotlyjs="cdn")
        try:  # PNG when kaleido is available
            fig.write_image(str(out / f"{name}.png"))
        except Exception:
            pass
        written.append(path)

    presets = list(dict.fromkeys(r["preset"] for r in e2e))
    for metric, unit, scale in (("cpu", "CPU-seconds", 1.0), ("bytes", "GB", 1e-9)) if presets else ():
        fig = make_subplots(rows=1, cols=len(presets), subplot_titles=presets)
        for i, p in enumerate(presets, start=1):
            rs = [r for r in e2e if r["preset"] == p]
            x = [r["label"] for r in rs]
            q = [(r["query_cpu_s"] if metric == "cpu" else r["query_bytes"]) * scale for r in rs]
            c = [(r["recluster_cpu_s"] if metric == "cpu" else r["recluster_bytes"]) * scale for r in rs]
            red = [r["cpu_reduction_vs_nr"] if metric == "cpu" else r["bytes_reduction_vs_nr"] for r in rs]
            fig.add_bar(x=x, y=q, name="query", marker_color="#4C78A8", showlegend=i == 1, row=1, col=i)
            fig.add_bar(x=x, y=c, name="reclustering", marker_color="#F58518", marker_pattern_shape="/",
                        showlegend=i == 1, row=1, col=i,
                        text=[f"{v:+.0%}" if v is not None else "" for v in red], textposition="outside")
        fig.update_layout(barmode="stack", title=f"Figure 10: end-to-end cost ({unit}); labels: reduction vs NR",
                          height=450, width=1300)
        save(fig, f"wair_fig10_end_to_end_{metric}")
    tp = [b for b in batches if b["preset"] == "tpch" and b["measured"]]
    if tp:
        periods = sorted({b["period"] for b in tp})
        fig = make_subplots(rows=len(periods), cols=1, subplot_titles=[f"P{p}" for p in periods])
        for i, p in enumerate(periods, start=1):
            for name in ("nr", "nn", "qd", "dd", "wair", "wair-static"):
                rs = [b for b in tp if b["period"] == p and b["policy"] == name]
                fig.add_scatter(x=[b["batch"] for b in rs], y=[b["query_cpu_s"] + b["recluster_cpu_s"] for b in rs],
                                name=LABELS[name], legendgroup=name, showlegend=i == 1, mode="lines+markers",
                                row=i, col=1)
        fig.update_layout(title="Figure 11: TPC-H per-batch cost (query + reclustering CPU-s) per period",
                          height=250 * len(periods), width=1000)
        save(fig, "wair_fig11_tpch_periods")
    if sens:
        studies = list(dict.fromkeys(r["study"] for r in sens))
        fig = make_subplots(rows=1, cols=len(studies), subplot_titles=studies)
        for i, st in enumerate(studies, start=1):
            for name in SENS_POLICIES:
                rs = [r for r in sens if r["study"] == st and r["policy"] == name]
                y = [r["cpu_vs_nr"] if st == "selectivity_days" else r["pruning_rate"] for r in rs]
                fig.add_scatter(x=[str(r["value"]) for r in rs], y=y, name=LABELS[name], legendgroup=name,
                                showlegend=i == 1, mode="lines+markers", row=1, col=i)
        fig.update_layout(title="Figures 13/16: pruning rate (a-c); cost relative to NR (selectivity)",
                          height=420, width=1500)
        save(fig, "wair_fig13_16_sensitivity")
    if gap:
        fig = go.Figure()
        for name in dict.fromkeys(g["policy"] for g in gap):
            gs = [g for g in gap if g["policy"] == name]
            fig.add_scatter(x=[g["index"] for g in gs], y=[g["cumulative_gap"] for g in gs],
                            name=f"{LABELS[name]} cumulative gap")
            fig.add_scatter(x=[g["index"] for g in gs], y=[g["batch_gap"] for g in gs],
                            name=f"{LABELS[name]} per-batch gap", line={"dash": "dot"})
        fig.update_layout(title="Figure 19: WAIR total cost vs oracle query cost (fixed l_shipdate)",
                          yaxis_tickformat=".0%", height=420, width=900)
        save(fig, "wair_fig19_oracle_gap")
    return written


# ----------------------------------------------------------------------------- main

def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (about 10 minutes here)")
    ap.add_argument("--rows", type=int, default=None, help="rows per preset (default 1M, quick 200k)")
    ap.add_argument("--sens-rows", type=int, default=None, help="rows of the sensitivity runs")
    ap.add_argument("--presets", default="tpch,dsb,mirrors,tpch2")
    ap.add_argument("--uncalibrated", action="store_true",
                    help="the default Settings rates and no per-query cost (the uncalibrated economics)")
    ap.add_argument("--skip-sensitivity", action="store_true")
    ap.add_argument("--studies", default="",
                    help="comma-separated sensitivity studies (recluster_start, shifting_rate, "
                         "skew, selectivity_days; default all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(DETAILS), help="folder of the detail tables and figures")
    args = ap.parse_args(argv)
    rows = args.rows or (200_000 if args.quick else 1_000_000)
    sens_rows = args.sens_rows or (100_000 if args.quick else 300_000)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    t0 = time.perf_counter()
    e2e, batches, tuning_rows, gap = [], [], [], []
    meta: dict[str, Any] = {"rows": rows, "sens_rows": sens_rows, "seed": args.seed, "quick": args.quick,
                            "rates": {"scan_bytes_per_s": settings.scan_bytes_per_s,
                                      "sort_bytes_per_s": settings.sort_bytes_per_s}, "presets": {}}
    for preset in [p.strip() for p in args.presets.split(",") if p.strip()]:
        log(f"{preset}: {rows:,} rows, policies {', '.join(MAIN_POLICIES)}")
        res = run_preset(preset, rows, args.seed, MAIN_POLICIES, settings,
                         calibrated=not args.uncalibrated)
        e2e += end_to_end_rows(preset, res)
        batches += batch_rows(preset, res)
        if res["tuning"]:
            for g in res["tuning"]["grid"]:
                tuning_rows.append({"preset": preset, **g, "chosen": g.get("depth_threshold") ==
                                    res["tuning"]["chosen"].get("depth_threshold") and g.get("max_partitions") ==
                                    res["tuning"]["chosen"].get("max_partitions"),
                                    "budget_bytes": res["tuning"]["budget_bytes"]})
        st = res["settings"]
        meta["presets"][preset] = {"summary": res["scenario"].summary(), "seconds": round(res["seconds"], 1),
                                   "rates": {k: getattr(st, k) for k in (
                                       "scan_bytes_per_s", "sort_bytes_per_s", "rewrite_read_bytes_per_s",
                                       "rewrite_fixed_s", "query_fixed_s")}}
        for r in e2e:
            if r["preset"] == preset:
                log(f"  {r['label']:>10}: bytes {r['bytes_reduction_vs_nr']:+.1%}  CPU {r['cpu_reduction_vs_nr']:+.1%}  "
                    f"pruning {r['pruning_rate']:.2f}  recluster share {r['recluster_share_cpu']:.1%}")
        if preset == "dsb":  # one predicate column: the main run's oracle is Figure 19's
            dsb_gap = [{"policy": "wair", **g} for g in oracle_gap_rows(res, "wair")]
            meta["dsb_oracle_gap"] = dsb_gap[-1] if dsb_gap else None
            if dsb_gap:
                log(f"  dsb, Figure 19-style: WAIR's cumulative gap to the oracle {dsb_gap[-1]['cumulative_gap']:.1%} "
                    f"at recluster share {dsb_gap[-1]['recluster_share']:.1%} (paper, TPC-H: 75% at 12.9%)")
            write_table(RESULTS, "dsb_oracle_gap", dsb_gap)
        write_table(RESULTS, "end_to_end", e2e, by_preset=True)
        write_csv(out / "wair_end_to_end.csv", e2e)
        write_csv(out / "wair_batches.csv", batches)
        write_csv(out / "wair_dd_tuning.csv", tuning_rows)
    if "tpch" in args.presets:
        log("tpch with a fixed predicate column (Figure 19)")
        res = run_preset("tpch", rows, args.seed, ("wair", "wair-static", "oracle"), settings,
                         {"predicate_switch": False}, calibrated=not args.uncalibrated)
        gap = []
        meta["fig19"] = {}
        for name in ("wair", "wair-static"):
            rows_ = [{"policy": name, **g} for g in oracle_gap_rows(res, name)]
            gap += rows_
            meta["fig19"][name] = rows_[-1] if rows_ else None
            log(f"  {LABELS[name]}: cumulative gap to oracle {rows_[-1]['cumulative_gap']:.1%} at recluster share "
                f"{rows_[-1]['recluster_share']:.1%}")
        write_table(RESULTS, "fig19_oracle_gap", gap)
        write_csv(out / "wair_fig19_oracle_gap.csv", gap)
    sens: list[dict[str, Any]] = []
    if not args.skip_sensitivity:
        only = tuple(s.strip() for s in args.studies.split(",") if s.strip())
        sens = sensitivity(sens_rows, args.seed, settings, args.quick, only)
        write_table(RESULTS, "sensitivity" + ("_" + "_".join(only) if only else ""), sens)
        write_csv(out / f"wair_sensitivity{'_' + '_'.join(only) if only else ''}.csv", sens)
    meta["plots"] = [p.name for p in plots(e2e, batches, sens, gap, out)]
    meta["seconds"] = round(time.perf_counter() - t0, 1)
    (out / "wair_meta.json").write_text(json.dumps(meta, indent=1, default=str))
    log(f"done in {meta['seconds']} s; results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
