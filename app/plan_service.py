"""Engine calls of the plan pages: previews, plans and their lifecycle, realized savings,
the workload's lint and the reclustering history, behind Streamlit caches.

The cache rules of :mod:`app.services` hold: derived numbers are cached as data keyed by
the snapshot id and the workload key, so a run or a rollback is a new cache entry; nothing
here mutates a cached return.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import pandas as pd
import streamlit as st

from app import views
from app.services import (analyze, clear_caches, current_snapshot_id, home, settings, workload_key, workspace)
from engine import api
from engine.core.errors import AdvisorError


@st.cache_data(show_spinner=False, max_entries=32)
def _preview(home_: str, table: str, policy: str, params: tuple[tuple[str, Any], ...],
             snapshot_id: str, wkey: str) -> dict[str, Any]:
    return api.preview_plan(workspace(), table, policy=policy, params=dict(params)).to_json()


def preview_plan(table: str, policy: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``policy`` would propose on the current snapshot; nothing is stored.

    ``status`` is ``preview`` with groups, costs and the curve, or ``no-action`` with the
    policy's reason."""
    key = tuple(sorted((k, v) for k, v in (params or {}).items() if v is not None))
    return _preview(home(), table, policy, key, current_snapshot_id(table), workload_key(table))


@st.cache_data(show_spinner=False, max_entries=8)
def _busier(home_: str, table: str, params: tuple[tuple[str, Any], ...], snapshot_id: str,
            wkey: str) -> dict[str, Any]:
    return dict(api.busier_preview(workspace(), table, dict(params)))


def busier_preview(table: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The busier-workload what-if: how many times as often the same queries must arrive
    before WAIR proposes a plan, and that plan (:func:`engine.api.busier_preview`)."""
    key = tuple(sorted((k, v) for k, v in (params or {}).items() if v is not None))
    return _busier(home(), table, key, current_snapshot_id(table), workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _wair_k_max(home_: str, table: str, snapshot_id: str, budget: int) -> dict[str, Any]:
    return api.wair_k_max(workspace(), table).to_json()


def wair_k_max(table: str) -> dict[str, Any]:
    """The k_max WAIR derives on the table's current snapshot when none is given
    (:func:`engine.api.wair_k_max`: memory budget over the median partition), the
    Recommendation form's default, as the CLI's without ``--k-max``."""
    return _wair_k_max(home(), table, current_snapshot_id(table), int(settings().memory_budget_bytes))


@st.cache_data(show_spinner=False, max_entries=16)
def _wair_window(home_: str, table: str, wkey: str, state: str) -> int | None:
    return api.wair_window(workspace(), table)


def wair_window(table: str) -> int | None:
    """The window WAIR starts from on the table when none is given (a day of its queries,
    :func:`engine.api.wair_window`), None once WAIR keeps a state on it: the
    Recommendation form's default, as the CLI's without ``--window``."""
    state = json.dumps(api.wair_state(workspace(), table).to_json(), sort_keys=True, default=str)
    return _wair_window(home(), table, workload_key(table), state)


def signature_points(rec: Mapping[str, Any]) -> tuple | None:
    """The savings-signature scatter of a preview, projected to 2-D by the engine; the
    arguments of :func:`app.charts.signatures`, or None when there is nothing to draw."""
    scatter = (rec.get("details") or {}).get("scatter") or {}
    return views.signature_points(scatter, api.signature_projection(scatter))


def create_plan(table: str, policy: str, params: Mapping[str, Any], actor: Any) -> dict[str, Any]:
    """Store the policy's proposal as a plan in state ``proposed``; ``actor`` is the
    signed-in identity (who then signs the plan) or a bare name (an unsigned proposer,
    whose plan needs two different approvers)."""
    return api.create_plan(workspace(), table, policy=policy,
                           params={k: v for k, v in params.items() if v is not None},
                           created_by=actor).to_json()


def default_proposer() -> str:
    """Who stores a plan from the dashboard: the OS user running it."""
    return views.proposer_label(api.default_actor())


@st.cache_data(show_spinner=False, max_entries=8)
def _trend(home_: str, table: str, current: str, wkey: str, columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(api.clustering_trend(workspace(), table, columns=list(columns)))


def clustering_trend(table: str, columns: list[str]) -> pd.DataFrame:
    """Average depth per column and the workload's pruning per snapshot, oldest first."""
    return _trend(home(), table, current_snapshot_id(table), workload_key(table), tuple(columns))


def reclustering_history(table: str) -> pd.DataFrame:
    """The runs of ``table``'s plans with predicted against measured figures, the saving
    re-estimated on the decision window and the one realized on later queries (the run
    list is not cached: the control store is the live truth)."""
    rows = api.reclustering_history(workspace(), table)
    for row in rows:
        if row["status"] == "succeeded":
            try:
                row["later"] = realized_savings(int(row["plan"]), table)
            except AdvisorError as exc:  # e.g. a snapshot expired by gc: say so in its cell
                row["later"] = {"status": f"unavailable: {exc}"}
    return views.history_frame(rows)


@st.cache_data(show_spinner=False, max_entries=64)
def _realized(home_: str, plan_id: int, wkey: str) -> dict[str, Any]:
    return dict(api.realized_savings(workspace(), plan_id))


def realized_savings(plan_id: int, table: str) -> dict[str, Any]:
    """The saving of a run over the queries imported after it (scored on the snapshots
    before and after, the log's measured figures beside the estimate); cached per
    workload version, since a new import is what changes it."""
    return _realized(home(), int(plan_id), workload_key(table))


def prediction_history(table: str) -> dict[str, Any]:
    """Every run's predicted rewrite time beside the measured one, with the summary
    (not cached: a run adds a row)."""
    return dict(api.prediction_history(workspace(), table))


def savings_history(table: str) -> dict[str, Any]:
    """Every run's predicted saving beside the verified and the realized one, with the
    summary (not cached: a run adds a row)."""
    return api.savings_history(workspace(), table).to_json()


@st.cache_data(show_spinner=False, max_entries=8)
def _lint(home_: str, table: str, wkey: str) -> pd.DataFrame:
    return pd.DataFrame(api.lint_workload(workspace(), table),
                        columns=["query_id", "kind", "column", "predicate", "reason", "rewrite"])


def workload_lint(table: str) -> pd.DataFrame:
    """Predicates of the stored queries that cannot prune, with the reason and a rewrite."""
    return _lint(home(), table, workload_key(table))


@st.cache_data(show_spinner=False, max_entries=16)
def _plan_impact(home_: str, table: str, snapshot_id: str, wkey: str, groups_key: str,
                 _groups: Any, window: int | None) -> dict[str, pd.DataFrame]:
    # the groups are hashed into groups_key (a preview's groups hold thousands of paths)
    return views.impact_frames(api.plan_impact(workspace(), table, _groups, window_queries=window))


def plan_impact(table: str, plan: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """A plan's (or preview's) predicted effect per query and per filtered column, cached
    per snapshot, workload version and groups."""
    window = int((plan.get("predicted_saving") or {}).get("window_queries") or 0) or None
    groups = plan["groups"]
    digest = hashlib.sha256(json.dumps(groups, sort_keys=True, default=str).encode()).hexdigest()
    return _plan_impact(home(), table, current_snapshot_id(table), workload_key(table), digest,
                        groups, window)


def list_plans(table: str | None = None) -> pd.DataFrame:
    """Stored plans, newest first (not cached: the control store is the live truth)."""
    return views.plans_list([r.to_json() for r in api.list_plans(workspace(), table=table)])


def show_plan(plan_id: int) -> dict[str, Any]:
    """Everything about one plan (groups, costs, audit, progress, result)."""
    return api.show_plan(workspace(), int(plan_id)).to_json()


def approve_plan(plan_id: int, actor: Any, reason: str = "", secret: str | None = None) -> dict[str, Any]:
    """Approve as ``actor``; an identity-provider sign-in first unlocks the approver's
    signing key with ``secret`` (approvals are signed)."""
    if secret and getattr(actor, "signing_key", None) is None:
        actor = api.unlock_signing_key(workspace(), actor, secret)
    return api.approve_plan(workspace(), int(plan_id), actor, reason or None).to_json()


def verify_plan(plan_id: int, actor: Any) -> str:
    """Rewrite a sample of the plan into a scratch folder and measure its window
    (``plan verify``); returns the one-line result, stored with the plan."""
    return api.verify_plan(workspace(), int(plan_id), actor).line()


def verification(plan_id: int) -> dict[str, Any] | None:
    """The plan's stored verification, None before ``Verify``."""
    return api.verification(workspace(), int(plan_id))


def reject_plan(plan_id: int, actor: Any, reason: str = "") -> dict[str, Any]:
    return api.reject_plan(workspace(), int(plan_id), actor, reason or None).to_json()


def audit_log(plan_id: int | None = None) -> pd.DataFrame:
    rows = api.audit_log(workspace(), plan_id=None if plan_id is None else int(plan_id))
    return pd.DataFrame([dict(r) for r in rows])


def depth_before_after(plan: Mapping[str, Any]) -> pd.DataFrame:
    """Average and max depth of the plan's key columns on its base and result snapshots."""
    after_id = (plan.get("result") or {}).get("snapshot_id")
    cols = views.plan_key_columns(plan)
    if not after_id or not cols:
        return pd.DataFrame()
    return views.depth_before_after(cols, analyze(plan["table"], plan["base_snapshot"]),
                                    analyze(plan["table"], after_id))


def wair_state(table: str) -> dict[str, Any]:
    """What WAIR learned on ``table`` (window, credit, debt, window closes, its plans);
    not cached: a plan creation or run changes it."""
    return api.wair_state(workspace(), table).to_json()


def reset_wair_state(table: str, actor: Any, reason: str = "") -> dict[str, Any]:
    """Forget WAIR's learned state on ``table`` (a signed-in approver; audited)."""
    out = api.reset_policy_state(workspace(), table, actor, reason or None).to_json()
    clear_caches()
    return out


def plan_exports(plan_id: int) -> tuple[str, str]:
    """(JSON, Markdown runbook) of a stored plan, for the download buttons."""
    return api.plan_json(workspace(), int(plan_id)), api.plan_runbook(workspace(), int(plan_id))


def compare_plans(a: int, b: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """Two stored plans side by side: the frame and the partition overlap counts."""
    out = api.compare_plans(workspace(), int(a), int(b))
    return views.compare_frame(out), {k: int(out[k]) for k in ("shared_partitions", "only_a",
                                                               "only_b")}


def start_run(plan_id: int, actor: Any) -> Any:
    """Run an approved plan in the engine's background thread (the first run starts Spark,
    ~12 s); the page follows it with :func:`run_progress`."""
    return api.start_run(workspace(), int(plan_id), actor=actor)


def run_progress(plan_id: int) -> tuple[float, str, str]:
    """(fraction done, message, status) of a plan's run, from the control store (so a run
    started elsewhere, e.g. by the CLI, shows the same way)."""
    return views.run_progress(api.plan_progress(workspace(), int(plan_id)))


def ddep_ep_files(table: str, ep: Mapping[str, Any]) -> set[int]:
    """EP files holding partitions DD-EP would recluster now (empty when it proposes
    nothing); needs the current snapshot, as plans always do."""
    try:
        rec = preview_plan(table, "dd-ep", {})
    except AdvisorError:
        return set()
    if rec.get("status") == "no-action":
        return set()
    paths = [p for g in rec.get("groups") or [] for p in g["partitions"]]
    return api.ep_files_holding(workspace(), table, paths, int(ep["ep_file_partitions"]),
                                snapshot_id=rec["base_snapshot"])
