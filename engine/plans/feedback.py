"""Realized versus predicted savings of a run, and the policy state that carries it forward.

After a plan commits, the same queries are replayed against the zonemaps of the base
snapshot and of the new one (metadata only, conservative pruning): the bytes each query
would scan before and after, summed. The difference is the realized saving, in bytes and
in CPU-seconds priced like equation 3 of WAIR (a query's measured duration when the log has
it, else its bytes at scan rate, scaled by the share of its bytes that are no longer read).

The queries are the window the policy decided on (the last
``predicted_saving["window_queries"]`` fragments of the table, known at run time).
The result feeds :meth:`Policy.observe` once per run (WAIR's credit, debt and adaptive
window, section 4.2) and is persisted with the policy's state. :func:`load_policy` and
:func:`save_policy_state` are the one place a policy's state is read and written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from engine.core.jsonable import plain_json
from engine.plans.store import ControlStore
from engine.policy.base import Feedback, Policy
from engine.policy.costmodel import scan_seconds
from engine.policy.registry import make_policy
from engine.scan.pruning import analyze_workload

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.table.model import Snapshot
    from engine.workload.model import ScanFragment


def compare_snapshots(settings: "Settings", before: "Snapshot", after: "Snapshot",
                      fragments: Sequence["ScanFragment"]) -> dict[str, Any]:
    """Bytes the fragments scan over ``before`` and ``after``, and the CPU-seconds saved."""
    frags = list(fragments)
    if not frags:
        return {"queries": 0, "bytes_before": 0.0, "bytes_after": 0.0, "saving_bytes": 0.0,
                "saving_cpu_seconds": 0.0, "partitions_scanned_before": 0,
                "partitions_scanned_after": 0}
    scans_before = analyze_workload(before.zonemaps(), frags)
    scans_after = analyze_workload(after.zonemaps(), frags)
    bytes_before = bytes_after = cpu = 0.0
    parts_before = parts_after = 0
    for frag, sb, sa in zip(frags, scans_before, scans_after):
        b, a = sb.bytes_scanned, sa.bytes_scanned
        bytes_before += b
        bytes_after += a
        parts_before += int(sb.scanned.sum())
        parts_after += int(sa.scanned.sum())
        if b > 0:
            t_read = (frag.duration_ms / 1000.0 if frag.duration_ms and frag.duration_ms > 0
                      else scan_seconds(b, settings))
            cpu += t_read * (b - a) / b
    return {"queries": len(frags), "bytes_before": bytes_before, "bytes_after": bytes_after,
            "saving_bytes": bytes_before - bytes_after, "saving_cpu_seconds": cpu,
            "partitions_scanned_before": parts_before, "partitions_scanned_after": parts_after}


def window_fragments(fragments: Sequence["ScanFragment"], n: int) -> list["ScanFragment"]:
    """The last ``n`` fragments (the policy's window at decision time)."""
    frags = list(fragments)
    return frags[-n:] if n > 0 else frags


def realized_report(settings: "Settings", before: "Snapshot", after: "Snapshot",
                    fragments: Sequence["ScanFragment"], predicted: Mapping[str, Any],
                    cost_cpu_seconds: float) -> dict[str, Any]:
    """Realized vs predicted over ``fragments`` (the decision's window), as recorded on the
    plan."""
    measured = compare_snapshots(settings, before, after, fragments)
    pred_bytes = float(predicted.get("bytes", 0.0) or 0.0)
    pred_cpu = float(predicted.get("cpu_seconds", 0.0) or 0.0)
    return {
        "scope": "window",
        **measured,
        "predicted_saving_bytes": pred_bytes,
        "predicted_saving_cpu_seconds": pred_cpu,
        "realized_over_predicted": (measured["saving_cpu_seconds"] / pred_cpu
                                    if pred_cpu > 0 else None),
        "recluster_cost_cpu_seconds": float(cost_cpu_seconds),
    }


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


def save_policy_state(control: ControlStore, table: str, name: str,
                      policy: Policy) -> dict[str, Any] | None:
    """Persist what ``policy`` learned on ``table``; returns the state as saved (JSON-plain,
    infinities as null), or None for a policy without memory (nothing is stored)."""
    state = policy.state()
    if not state:
        return None
    plain = plain_json(state, inf_as_none=True)
    control.save_policy_state(table, name, plain)
    return plain


def feedback_from_report(report: Mapping[str, Any]) -> Feedback:
    """What :meth:`Policy.observe` learns from a :func:`realized_report`."""
    return Feedback(predicted_saving_cpu_s=float(report["predicted_saving_cpu_seconds"]),
                    realized_saving_cpu_s=float(report["saving_cpu_seconds"]),
                    recluster_cost_cpu_s=float(report["recluster_cost_cpu_seconds"]),
                    queries=int(report["queries"]))


def feed_policy(control: ControlStore, table: str, name: str, params: Mapping[str, Any],
                report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Give a run's outcome to the policy (``observe``) and persist its new state.

    Returns the new state, or None for policies without memory.
    """
    policy = load_policy(control, table, name, params)
    policy.observe(feedback_from_report(report))
    return save_policy_state(control, table, name, policy)
