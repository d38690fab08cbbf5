"""Plans that ran, stored as :func:`engine.plans.service.run_plan` stores them (a window
replay and a verdict in the result, a verification beside the plan), without Spark: the
savings history's tests (engine, CLI and dashboard)."""

from __future__ import annotations

from engine.policy.base import CostEstimate, Proposal
from engine.policy.codec import proposal_to_json
from engine.workspace import Workspace

MB = 1_000_000.0


def proposal(predicted: float) -> dict:
    """A proposal predicting ``predicted`` bytes saved over a 50-query window."""
    return proposal_to_json(Proposal("wair", {}, (), CostEstimate(0.0, 0.0, 1.0, 0.0),
                                     {"bytes": predicted, "cpu_seconds": 1.0,
                                      "window_queries": 50.0}))


def replayed(saving: float, predicted: float) -> dict:
    """The run's replay of its 50-query window: ``saving`` bytes fewer read."""
    return {"scope": "re-estimated", "queries": 50, "saving_bytes": saving,
            "predicted_saving_bytes": predicted, "bytes_before": 500 * MB,
            "bytes_after": 500 * MB - saving, "saving_cpu_seconds": 0.5,
            "predicted_saving_cpu_seconds": 1.0, "partitions_scanned_before": 8,
            "partitions_scanned_after": 4, "realized_over_predicted": 0.5}


def ran_plan(ws: Workspace, snapshot, predicted: float, replay: dict, delivery: dict | None,
             verified: float | None = None, table: str = "lineitem",
             new_snapshot: str = "9") -> int:
    """A plan that ran: proposed with ``predicted`` bytes, verified at ``verified`` (None:
    not verified), committed as ``new_snapshot`` with ``replay`` and ``delivery``."""
    control = ws.control
    pid = control.insert_plan(table, snapshot.id, "wair", {}, proposal(predicted), "tester",
                              status="running")
    if verified is not None:
        control.save_verification(pid, "alice", {"plan_id": pid, "predicted_saving_bytes": predicted,
                                                 "verified_saving_bytes": verified,
                                                 "ratio": verified / predicted})
    result = {"snapshot_id": new_snapshot, "re_estimated": replay}
    if delivery is not None:
        result["delivery"] = delivery
    control.transition(pid, ("running",), "succeeded", "system", "succeed", result=result)
    return pid


def four_runs(ws: Workspace, snapshot, new_snapshot: str = "9") -> None:
    """Four runs and one plan that never ran:
    1: predicted 100 MB, verified 95 MB, realized 80 MB (error -20 %)
    2: predicted 100 MB, realized 130 MB (+30 %, at the tolerance)
    3: predicted 200 MB, realized -10 MB: underdelivered (-105 %)
    4: predicted 50 MB, the window could not be replayed (no error)."""
    ran_plan(ws, snapshot, 100 * MB, replayed(80 * MB, 100 * MB),
             {"underdelivered": False, "ratio": 0.8, "reason": "saved 80 MB"}, verified=95 * MB,
             new_snapshot=new_snapshot)
    ran_plan(ws, snapshot, 100 * MB, replayed(130 * MB, 100 * MB),
             {"underdelivered": False, "ratio": 1.3, "reason": "saved 130 MB"},
             new_snapshot=new_snapshot)
    ran_plan(ws, snapshot, 200 * MB, replayed(-10 * MB, 200 * MB),
             {"underdelivered": True, "ratio": -0.05,
              "reason": "the workload now reads 9.5 MiB more than before"},
             new_snapshot=new_snapshot)
    ran_plan(ws, snapshot, 50 * MB, {"error": "OSError: gone"}, None, new_snapshot=new_snapshot)
    ws.control.insert_plan("lineitem", snapshot.id, "wair", {}, proposal(7 * MB), "tester")
