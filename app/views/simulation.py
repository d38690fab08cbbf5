"""Simulator and what-if results as frames: per batch, cumulative cost per policy,
one summary row per policy and the cost per measured period.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd


def simulation_frames(result: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Per-batch rows, cumulative CPU-seconds split into query and reclustering cost (over the
    measured batches, as the totals), and one summary row per policy."""
    rows = []
    for name, res in (result.get("policies") or {}).items():
        for b in res.get("batches") or []:
            rows.append({"policy": res.get("label", name), "batch": int(b["index"]) + 1,
                         "period": b["period"], "measured": bool(b["measured"]),
                         "query": float(b["query_cpu_seconds"]),
                         "recluster": float(b["recluster_cpu_seconds"]),
                         "pruning_rate": float(b["pruning_rate"]),
                         "partitions_rewritten": int(b.get("partitions_rewritten") or 0)})
    per = pd.DataFrame(rows)
    cum = per[per["measured"]].copy() if not per.empty else per
    if not cum.empty:
        cum["query"] = cum.groupby("policy")["query"].cumsum()
        cum["recluster"] = cum.groupby("policy")["recluster"].cumsum()
        cum["total"] = cum["query"] + cum["recluster"]
    return {"per_batch": per, "cumulative": cum, "summary": _simulation_summary(result)}


def _simulation_summary(result: Mapping[str, Any]) -> pd.DataFrame:
    comp = result.get("comparison") or {}
    summary = []
    for name, res in (result.get("policies") or {}).items():
        c = comp.get(name, {})
        summary.append({
            "policy": res.get("label", name),
            "query CPU-s": res["query_cpu_seconds"], "reclustering CPU-s": res["recluster_cpu_seconds"],
            # part of the reclustering: a fresh Spark session's start (engine.sim.session)
            "of which cold start CPU-s": float(res.get("cold_start_seconds") or 0.0),
            "total CPU-s": res["cpu_seconds"], "money ($)": res["money"],
            "mean pruning rate (%)": 100 * float(res["pruning_rate"]),
            "partitions rewritten": res["partitions_rewritten"],
            "total cost vs NR (%)": (None if c.get("cpu_reduction_vs_nr") is None
                                     else -100 * float(c["cpu_reduction_vs_nr"])),
        })
    frame = pd.DataFrame(summary)
    if not frame.empty:
        frame = frame.sort_values("total CPU-s").reset_index(drop=True)
    return frame


def period_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Query and reclustering CPU-seconds per policy and measured period (the replay, the
    shifted replay), from the what-if's per-batch records.

    >>> r = {"scenario": {"periods": [{"period": 2, "predicate": "a"}]}, "policies": {"nr": {
    ...     "label": "NR", "batches": [{"period": 2, "measured": True, "query_cpu_seconds": 1.5,
    ...     "recluster_cpu_seconds": 0.5}, {"period": 2, "measured": True,
    ...     "query_cpu_seconds": 1.0, "recluster_cpu_seconds": 0.0}]}}}
    >>> period_frame(r).to_dict("records")
    [{'policy': 'NR', 'period': 'P2 a', 'query CPU-s': 2.5, 'reclustering CPU-s': 0.5, 'total CPU-s': 3.0}]
    """
    names = {p["period"]: f"P{p['period']} {p['predicate']}" for p in (result.get("scenario") or {}).get("periods") or []}
    rows = []
    for res in (result.get("policies") or {}).values():
        for period in sorted({b["period"] for b in res.get("batches") or [] if b["measured"]}):
            bs = [b for b in res["batches"] if b["period"] == period and b["measured"]]
            q = float(sum(b["query_cpu_seconds"] for b in bs))
            r = float(sum(b["recluster_cpu_seconds"] for b in bs))
            rows.append({"policy": res.get("label"), "period": names.get(period, f"P{period}"),
                         "query CPU-s": q, "reclustering CPU-s": r, "total CPU-s": q + r})
    return pd.DataFrame(rows)
