"""Realized versus predicted savings of a run, and the policy state that carries it forward.

A query is scored on the zonemaps of the plan's base snapshot and of the snapshot the run
committed (metadata only, conservative pruning): the bytes it would scan before and after.
The difference is its saving, in bytes and in CPU-seconds priced like equation 3 of WAIR
(its measured duration when the log has it, else its bytes at scan rate, scaled by the
share of its bytes no longer read).

Two scopes, never mixed (WAIR section 4.3, realized savings):

* **re-estimated** (:func:`realized_report`, at run time): the window the policy decided
  on replayed on both snapshots. The same queries the prediction was fitted on, so it
  checks the executor and the zonemap model, not the forecast.
* **realized** (:func:`later_report`): the queries imported AFTER the run (the run records
  how many fragments the table had, ``queries_at_run``). Where the log carries measured
  ``bytes_scanned`` / ``duration_ms`` they are set beside the estimate for the new
  snapshot. This is WAIR's "query savings are measured by comparing zonemaps before and
  after reclustering to track additional micro-partitions skipped at future queries"
  (section 4.3), and it is what the policy learns from: :func:`settle_later` feeds
  :meth:`Policy.observe` (credit of eq. 5, debt of eq. 2, the window of section 4.2) once
  a run has been followed by as many later queries as the window it was predicted over,
  with the prediction scaled to the same number of queries.

:func:`load_policy` and :func:`save_policy_state` are the one place a policy's state is
read and written; the ids of the plans already fed are kept beside it
(``settled_plans``), so each run is learned from once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from engine.core.jsonable import plain_json
from engine.plans.store import ControlStore
from engine.policy.base import Feedback, Policy
from engine.policy.costmodel import read_seconds
from engine.policy.registry import make_policy
from engine.scan import rowgroups
from engine.scan.pruning import analyze_workload

if TYPE_CHECKING:
    from engine.plans.plan import Plan
    from engine.table.model import Snapshot
    from engine.table.store import TableStore
    from engine.workload.model import ScanFragment

#: kept beside a policy's saved state: the plans whose later queries it has learned from
SETTLED_KEY = "settled_plans"
RE_ESTIMATED = "re-estimated"
REALIZED = "later queries"


def compare_snapshots(tables: "TableStore", before: "Snapshot", after: "Snapshot",
                      fragments: Sequence["ScanFragment"]) -> dict[str, Any]:
    """Bytes the fragments scan over ``before`` and ``after``, and the CPU-seconds saved.
    ``tables``: the home's table catalog; its settings price the reads and say whether
    scans are charged by row group (:func:`engine.scan.rowgroups.if_enabled`)."""
    settings = tables.settings
    frags = list(fragments)
    if not frags:
        return {"queries": 0, "bytes_before": 0.0, "bytes_after": 0.0, "saving_bytes": 0.0,
                "saving_cpu_seconds": 0.0, "partitions_scanned_before": 0,
                "partitions_scanned_after": 0}
    # row-group level on both sides
    scans_before = analyze_workload(before.zonemaps(), frags, rowgroups.if_enabled(tables, before.table, before))
    scans_after = analyze_workload(after.zonemaps(), frags, rowgroups.if_enabled(tables, after.table, after))
    bytes_before = bytes_after = cpu = 0.0
    parts_before = parts_after = 0
    for frag, sb, sa in zip(frags, scans_before, scans_after):
        b, a = sb.bytes_scanned, sa.bytes_scanned
        bytes_before += b
        bytes_after += a
        parts_before += sb.scanned_count
        parts_after += sa.scanned_count
        if b > 0:
            t_read = (frag.duration_ms / 1000.0 if frag.duration_ms and frag.duration_ms > 0
                      else read_seconds(b, sb.scanned_count, settings))
            cpu += t_read * (b - a) / b
    return {"queries": len(frags), "bytes_before": bytes_before, "bytes_after": bytes_after,
            "saving_bytes": bytes_before - bytes_after, "saving_cpu_seconds": cpu,
            "partitions_scanned_before": parts_before, "partitions_scanned_after": parts_after}


def window_fragments(fragments: Sequence["ScanFragment"], n: int) -> list["ScanFragment"]:
    """The last ``n`` fragments (the policy's window at decision time)."""
    frags = list(fragments)
    return frags[-n:] if n > 0 else frags


def realized_report(tables: "TableStore", before: "Snapshot", after: "Snapshot",
                    fragments: Sequence["ScanFragment"], predicted: Mapping[str, Any],
                    cost_cpu_seconds: float) -> dict[str, Any]:
    """Realized vs predicted over ``fragments`` (the decision's window), as recorded on the
    plan."""
    measured = compare_snapshots(tables, before, after, fragments)
    return _report(RE_ESTIMATED, "re-estimated: the decision's window replayed on the "
                   "snapshots before and after (the queries the prediction was fitted on)",
                   measured, predicted, 1.0, cost_cpu_seconds)


def _report(scope: str, label: str, measured: Mapping[str, Any], predicted: Mapping[str, Any],
            scale: float, cost_cpu_seconds: float) -> dict[str, Any]:
    """One realized-vs-predicted record (the prediction times ``scale`` queries' worth)."""
    pred_bytes = float(predicted.get("bytes", 0.0) or 0.0) * scale
    pred_cpu = float(predicted.get("cpu_seconds", 0.0) or 0.0) * scale
    return {
        "scope": scope, "label": label, **measured,
        "predicted_saving_bytes": pred_bytes,
        "predicted_saving_cpu_seconds": pred_cpu,
        "realized_over_predicted": (measured["saving_cpu_seconds"] / pred_cpu
                                    if pred_cpu > 0 else None),
        "recluster_cost_cpu_seconds": float(cost_cpu_seconds),
    }


def later_report(tables: "TableStore", before: "Snapshot", after: "Snapshot",
                 fragments: Sequence["ScanFragment"], predicted: Mapping[str, Any],
                 cost_cpu_seconds: float) -> dict[str, Any]:
    """Realized savings over ``fragments``, the queries that came after the run, with the
    prediction scaled to as many queries (``predicted["window_queries"]`` is the number it
    was made for) and the log's measured bytes and durations beside the estimate."""
    frags = list(fragments)
    measured = compare_snapshots(tables, before, after, frags)
    window = float(predicted.get("window_queries", 0.0) or 0.0)
    scale = len(frags) / window if window > 0 else 0.0
    report = _report(REALIZED, f"realized: {len(frags)} queries imported after the run, "
                     "scored on the snapshots before and after", measured, predicted, scale,
                     cost_cpu_seconds)
    report["log"] = measured_against_estimate(after, frags, rowgroups.if_enabled(tables, after.table, after))
    return report


def measured_against_estimate(after: "Snapshot", fragments: Sequence["ScanFragment"],
                              row_groups: "rowgroups.RowGroupMaps | None" = None) -> dict[str, Any]:
    """The log's measured ``bytes_scanned`` and ``duration_ms`` of later queries beside the
    zonemap estimate of the bytes they scan on ``after`` (only queries that carry them).
    With ``row_groups`` (``after``'s, :func:`engine.scan.rowgroups.for_snapshot`) the
    estimate charges files of several row groups only the row groups each query meets, as
    an engine reading the files does and as :func:`compare_snapshots` scores the run."""
    with_bytes = [f for f in fragments if f.bytes_scanned is not None]
    estimated = measured_bytes = 0.0
    if with_bytes:
        for f, scan in zip(with_bytes, analyze_workload(after.zonemaps(), with_bytes, row_groups)):
            estimated += float(scan.bytes_scanned)
            measured_bytes += float(f.bytes_scanned or 0)
    timed = [f for f in fragments if f.duration_ms is not None]
    return {"queries_with_bytes": len(with_bytes), "measured_bytes": measured_bytes,
            "estimated_bytes": estimated,
            "measured_over_estimated": (measured_bytes / estimated if estimated > 0 else None),
            "queries_with_duration": len(timed),
            "measured_seconds": sum(float(f.duration_ms or 0.0) for f in timed) / 1000.0}


def later_fragments(plan: "Plan", fragments: Sequence["ScanFragment"]) -> list["ScanFragment"] | None:
    """The fragments imported after ``plan`` ran (None if it did not record where its run
    stood in the log)."""
    at = (plan.result or {}).get("queries_at_run")
    if at is None:
        return None
    return list(fragments)[int(at):]


def settle_later(tables: "TableStore", plans: Iterable["Plan"], policy: Policy,
                 fragments: Sequence["ScanFragment"], snapshot_of: Any,
                 settled: Sequence[int]) -> list[int]:
    """Feed ``policy`` the realized savings of each succeeded plan of ``plans`` not in
    ``settled`` whose run has been followed by at least the window it was predicted over
    (the first that many later queries are scored); returns the ids fed now.
    ``snapshot_of(plan, snapshot_id)`` opens a snapshot."""
    done = set(int(i) for i in settled)
    fed = []
    for plan in plans:
        if plan.status != "succeeded" or plan.id in done or plan.policy != policy.name:
            continue
        later = later_fragments(plan, fragments)
        predicted = plan.proposal.predicted_saving
        need = max(1, int(predicted.get("window_queries", 0) or 0))
        if later is None or len(later) < need:
            continue
        report = later_report(tables, snapshot_of(plan, plan.base_snapshot),
                              snapshot_of(plan, plan.result["snapshot_id"]), later[:need],
                              predicted, plan.proposal.estimated_cost.cpu_seconds)
        policy.observe(feedback_from_report(report))
        fed.append(plan.id)
    return fed


def settled_plans(control: ControlStore, table: str, name: str) -> list[int]:
    """The ids of the plans whose later queries ``name`` has learned from on ``table``."""
    saved = control.policy_state(table, name) or {}
    return [int(i) for i in saved.get(SETTLED_KEY, [])]


def load_policy(control: ControlStore, table: str, name: str,
                params: Mapping[str, Any] | None, window: int | None = None) -> Policy:
    """The policy ``name`` built with ``params``, its saved state on ``table`` restored.

    An explicit ``window`` replaces the saved window size (WAIR's ``window_size``): a
    window the user asks for wins over the adapted one. Without saved state the policy
    starts from its parameters.
    """
    policy = make_policy(name, params)
    saved = control.policy_state(table, name)
    if saved:
        policy.load_state(saved)
        if window is not None:
            state = policy.state()
            state["window_size"] = int(window)
            policy.load_state(state)
    return policy


def save_policy_state(control: ControlStore, table: str, name: str, policy: Policy,
                      settled: Sequence[int] | None = None) -> dict[str, Any] | None:
    """Persist what ``policy`` learned on ``table``; returns the state as saved (JSON-plain,
    infinities as null), or None for a policy without memory (nothing is stored). The ids
    of the plans it has learned from (``settled``, else those saved before) are kept."""
    state = policy.state()
    if not state:
        return None
    ids = settled_plans(control, table, name) if settled is None else settled
    state = {**state, SETTLED_KEY: sorted(set(int(i) for i in ids))}
    plain = plain_json(state, inf_as_none=True)
    control.save_policy_state(table, name, plain)
    return plain


def feedback_from_report(report: Mapping[str, Any]) -> Feedback:
    """What :meth:`Policy.observe` learns from a :func:`realized_report`."""
    return Feedback(predicted_saving_cpu_s=float(report["predicted_saving_cpu_seconds"]),
                    realized_saving_cpu_s=float(report["saving_cpu_seconds"]),
                    recluster_cost_cpu_s=float(report["recluster_cost_cpu_seconds"]),
                    queries=int(report["queries"]))
