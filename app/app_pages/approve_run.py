"""Approve and run: review stored plans, approve or reject them, run one, roll back."""

from __future__ import annotations

import time

import streamlit as st

from app import components, plan_service, run_service, services, views
from app.components import guard
from app.views import fmt_bytes, fmt_money, fmt_num, fmt_seconds

POLL_S = 0.5


def follow_run(plan_id: int, actor, run=None) -> None:
    """A running plan: progress with an ETA and a Cancel button for a signed-in approver.

    ``run``: the handle of a run this session just started; the page then waits for it
    (a Cancel click interrupts the wait and reruns the page). Else (a run started
    elsewhere, e.g. by the CLI, or the rerun after a click) the progress refreshes every
    second in a fragment and the page reloads when the run ends."""
    st.markdown("#### Running")
    reason = st.text_input("Reason for cancelling (recorded in the audit log)", key="cancel_reason")
    if st.button("Cancel run", key="cancel_run", disabled=actor is None,
                 help="Stops the Spark jobs, removes the files written so far and leaves the "
                      "table at its current snapshot. Needs a signed-in approver."):
        with st.spinner("Cancelling: stopping the Spark jobs, removing the written files..."):
            with guard(stop=False):
                out = run_service.cancel_run(plan_id, actor, reason)
                st.session_state["flash_run"] = views.cancel_text(out)
                st.rerun()
    if run is None:
        run_progress_fragment(plan_id)
        return
    bar, line = st.empty(), st.empty()
    while not run.done:
        show_eta(plan_id, bar, line)
        time.sleep(POLL_S)
    run_ended(plan_id)


def show_eta(plan_id: int, bar, line) -> dict:
    """Draw the run's progress bar and ETA line into two slots; returns the ETA answer."""
    info = run_service.run_eta(plan_id)
    bar.progress(min(1.0, info["fraction"]),
                 text=info["message"] or "starting (the first run starts Spark, ~15 s)")
    line.caption(views.eta_text(info))
    return info


def run_ended(plan_id: int) -> None:
    """After a run: a bug in this session's run shows its traceback, else reload the page
    (the plan's status and result say how it ended)."""
    run = st.session_state.get("active_runs", {}).pop(plan_id, None)
    if run is not None and run.error is not None:
        if not isinstance(run.error, services.AdvisorError):
            raise run.error
        st.session_state.setdefault("flash_run", f"The run stopped: {run.error}")
    with guard(stop=False):
        run_service.settle_cancelled(plan_id)  # a cancel whose requester stopped waiting
    services.clear_caches()
    st.rerun()


@st.fragment(run_every=1.0)
def run_progress_fragment(plan_id: int) -> None:
    """The run's progress and ETA, refreshed every second; the page reloads when it ends."""
    with guard(stop=False):
        info = show_eta(plan_id, st.empty(), st.empty())
        if info["status"] != "running":
            run_ended(plan_id)


st.title("Approve and run")
table = components.require_table()

actor = components.signed_in()
if actor is None:
    st.warning("Sign in as an approver (sidebar) to approve, reject or run a plan; rolling "
               "back needs an admin. Reading needs nothing.")
is_admin = actor is not None and actor.role == "admin"

with guard():
    plans = plan_service.list_plans(table)

st.subheader("Plans")
if plans.empty:
    st.info("No plan for this table yet. Open **Recommendation**, preview WAIR's proposal and "
            "press *Store as proposed plan* (or run `layout-advisor plan create "
            f"{table}`).")
    with guard(stop=False):
        rec = plan_service.preview_plan(table, "wair")
        if rec.get("status") == "no-action":
            components.declined_panel(table, rec, key="plans")
        else:
            st.success(f"WAIR proposes a plan now ({rec.get('partition_count', 0):,} partitions): "
                       "store it from **Recommendation**.")
else:
    st.dataframe(views.plans_frame(plans), hide_index=True, key="plans_table")
    ids = [int(i) for i in plans["id"]]
    wanted = st.session_state.get("selected_plan")
    plan_id = st.selectbox("Plan", ids, index=ids.index(int(wanted)) if wanted in ids else 0,
                           format_func=lambda i: f"plan {i} · "
                           f"{plans.loc[plans['id'] == i, 'status'].iloc[0]} · "
                           f"{plans.loc[plans['id'] == i, 'policy'].iloc[0]}",
                           key="plan_pick")
    st.session_state["selected_plan"] = plan_id
    with guard():
        plan = plan_service.show_plan(plan_id)

    status = plan["status"]
    st.markdown(f"### Plan {plan['id']} · {views.STATUS_BADGE.get(status, status)}")
    if st.session_state.get("flash_run"):
        st.info(views.md_text(st.session_state.pop("flash_run")))
    st.caption(f"{plan['policy']} on `{plan['table']}` from snapshot `{plan['base_snapshot']}` · "
               f"proposed by {views.md_text(plan.get('created_by') or 'unknown')} at {plan['created_at'][:19]} UTC")
    cost, saving = plan["estimated_cost"], plan["predicted_saving"]
    a, b, c, d = st.columns(4)
    a.metric("Partitions to rewrite", f"{plan['partition_count']:,}", help=f"{len(plan['groups'])} groups")
    b.metric("Reclustering cost", fmt_seconds(cost["cpu_seconds"]) + " CPU",
             help=f"{fmt_bytes(cost['bytes_read'])} read, {fmt_bytes(cost['bytes_written'])} "
                  f"written, {fmt_money(cost['money'])}")
    c.metric("Predicted saving per window", fmt_seconds(saving.get("cpu_seconds")) + " CPU",
             help=f"{fmt_bytes(saving.get('bytes'))} per {int(saving.get('window_queries') or 0)} queries")
    be = plan.get("break_even_queries")
    d.metric("Break-even", f"{be:,.0f} queries" if be is not None else "never")
    predicted = views.predicted_time_caption(plan)
    if predicted:
        st.caption(predicted)
    with st.expander("What will be rewritten", expanded=status in ("proposed", "approved")):
        st.table(views.groups_frame(plan), hide_index=True)
        components.hybrid_layout_chart(table, plan, key="plan_layout")
    with guard(stop=False):
        as_json, runbook = plan_service.plan_exports(plan_id)
        left, right, _ = st.columns([1, 1, 2])
        left.download_button("Export as JSON", as_json, file_name=f"plan-{plan_id}.json",
                             mime="application/json", key="export_json")
        right.download_button("Export as runbook (Markdown)", runbook,
                              file_name=f"plan-{plan_id}-runbook.md", mime="text/markdown",
                              key="export_runbook")

    if status == "stale":
        st.error("This plan is stale: the table changed since it was proposed (its base snapshot "
                 "is no longer current), so it can never run. Create a new plan on "
                 "**Recommendation**.")

    if status in ("proposed", "approved"):
        with guard(stop=False):
            checked = plan_service.verification(plan_id)
        if checked:
            ratio = checked.get("ratio")
            line = (f"Verified by {views.md_text(checked.get('verified_by'))}: saving "
                    f"{fmt_bytes(checked.get('verified_saving_bytes'))} per window against "
                    f"{fmt_bytes(checked.get('predicted_saving_bytes'))} predicted"
                    + (f" ({ratio:.0%})" if ratio is not None else ""))
            (st.success if ratio is not None and ratio >= 0.5 else st.warning)(line)
        if st.button("Verify on a sample", disabled=actor is None, key="verify",
                     help="Rewrite a sample of the plan's groups into a scratch folder exactly "
                          "as the run would (never committed), and measure the window's queries "
                          "on it before and after"):
            with guard(stop=False), st.spinner("Rewriting a sample and replaying the window"):
                st.session_state["flash_run"] = plan_service.verify_plan(plan_id, actor)
                st.rerun()
        reason = st.text_input("Reason (recorded in the audit log)", key="decision_reason")
        unlock = None
        if status == "proposed" and actor is not None and actor.signing_key is None:
            unlock = st.text_input("Your approver secret (an approval is signed with your "
                                   "key, which your secret unlocks)", type="password",
                                   key="approve_secret")
        left, mid, right = st.columns(3)
        approve_slot, reject_slot = left.empty(), mid.empty()
        if status == "proposed" and approve_slot.button("Approve", type="primary",
                                                        disabled=actor is None, key="approve"):
            with guard(stop=False):
                plan_service.approve_plan(plan_id, actor, reason, unlock)
                st.rerun()
        if reject_slot.button("Reject", disabled=actor is None, key="reject"):
            with guard(stop=False):
                plan_service.reject_plan(plan_id, actor, reason)
                st.rerun()
        if status == "approved" and right.button("Run now", type="primary", disabled=actor is None,
                                                 key="run"):
            # while it runs, nothing else may change the plan: the buttons are drawn disabled
            reject_slot.button("Reject", disabled=True, key="reject_running")
            with guard(stop=False):
                started = plan_service.start_run(plan_id, actor)
                st.session_state.setdefault("active_runs", {})[plan_id] = started
                follow_run(plan_id, actor, started)

    if status == "running":
        follow_run(plan_id, actor)
    elif status in ("failed", "cancelled") and plan.get("result"):
        result = plan["result"]
        if status == "cancelled":
            st.warning(f"Cancelled by {views.md_text(result.get('cancelled_by'))} at "
                       f"{result.get('cancelled_at')}: nothing was committed, the files the run "
                       "wrote were removed, the table is at the plan's base snapshot.")
        else:
            st.error(f"The run failed and nothing was committed: {views.md_text(result.get('error'))}")

    if (plan.get("result") or {}).get("snapshot_id"):
        result = plan["result"]
        st.subheader("Result")
        st.success(f"New snapshot `{result.get('snapshot_id')}`: {result.get('partitions_removed')} "
                   f"partitions replaced by {result.get('partitions_added')} in "
                   f"{fmt_num(result.get('seconds'), 1)} s ({fmt_bytes(result.get('bytes_written'))} "
                   "written).")
        replayed = result.get("re_estimated") or result.get("realized") or {}
        with guard(stop=False):
            checked = plan_service.verification(plan_id) or {}
        st.markdown(views.promise_text(plan["predicted_saving"].get("bytes"),
                                       checked.get("verified_saving_bytes"),
                                       replayed.get("saving_bytes")))
        verdict = result.get("delivery") or {}
        if verdict.get("underdelivered"):
            st.error(f"Underdelivered: {views.md_text(verdict.get('reason'))}"
                     + (f" — rolled back at once to snapshot `{verdict['rolled_back_to']}`."
                        if verdict.get("rolled_back_to") else ""))
            if not verdict.get("rolled_back_to") and status == "succeeded":
                if st.button("Roll back this run", disabled=not is_admin, key="undo_run",
                             help="Needs an admin. Makes the plan's base snapshot current again."):
                    with guard(stop=False):
                        services.rollback_table(plan["table"], plan["base_snapshot"], actor)
                        st.session_state["flash"] = (f"Plan {plan_id}'s run was rolled back: "
                                                     f"snapshot `{plan['base_snapshot']}` is current again.")
                        st.rerun()
        check = result.get("cost_check")
        if check:
            st.dataframe(views.cost_check_frame(check), hide_index=True, key="plan_cost_check")
            st.caption("The rewrite's predicted cost beside what the run measured"
                       + ("" if check.get("calibrated") else
                          " (rates not calibrated: run `layout-advisor calibrate`)") + ".")
        # the run's own replay of its decision window (older runs kept it under "realized")
        replay = result.get("re_estimated") or result.get("realized") or {}
        components.realized_later(plan)
        st.markdown(f"#### {views.RE_ESTIMATED_LABEL[:1].upper() + views.RE_ESTIMATED_LABEL[1:]}")
        if "error" in replay:
            st.warning(f"The decision window could not be replayed: {views.md_text(replay['error'])}")
        elif replay:
            components.savings_report(replay, views.RE_ESTIMATED_LABEL, key="plan_realized",
                                      ratio_label="Re-estimated / predicted",
                                      unit=components.run_unit(plan))
            st.caption(f"The same {replay['queries']} queries the prediction was fitted on, "
                       "replayed on the zonemaps of the snapshot before and after the run: it "
                       "checks the rewrite and the zonemap model, not the forecast (the "
                       "realized saving above is measured on later queries).")
        with guard(stop=False):
            st.dataframe(plan_service.depth_before_after(plan), hide_index=True, key="plan_depths")
            st.caption("Average and maximum overlap depth of the plan's key columns before and "
                       "after the run (lower is better).")

    if len(ids) > 1:
        with st.expander("Compare with another plan"):
            others = [i for i in ids if i != plan_id]
            other = st.selectbox("Other plan", others, key="compare_pick")
            with guard(stop=False):
                frame, overlap = plan_service.compare_plans(plan_id, other)
                st.dataframe(frame, hide_index=True, key="compare_table")
                st.caption(f"They share {overlap['shared_partitions']:,} partitions; "
                           f"{overlap['only_a']:,} only in plan {plan_id}, "
                           f"{overlap['only_b']:,} only in plan {other}.")

    with st.expander("Audit log"):
        with guard(stop=False):
            st.dataframe(plan_service.audit_log(plan_id), hide_index=True, key="plan_audit")

st.subheader("Reclustering history")
with guard(stop=False):
    history = plan_service.reclustering_history(table)
    if history.empty:
        st.caption("No plan has run on this table yet.")
    else:
        st.dataframe(history, hide_index=True, key="reclustering_history")
        st.caption("Every run with its predicted cost beside the measured time, and the "
                   "predicted saving per window beside the saving re-estimated on that window "
                   "and the one realized on the queries imported after the run.")

st.subheader("Savings: predicted, verified, realized")
with guard(stop=False):
    savings = plan_service.savings_history(table)
    if not savings["runs"]:
        st.caption("No run has recorded its realized saving on this table yet.")
    else:
        st.markdown(views.savings_summary(savings["summary"]))
        st.dataframe(views.underdelivered_red(views.savings_frame(savings["runs"])),
                     hide_index=True, key="savings_history")
        st.caption("Bytes the decision window's queries no longer read: the plan's prediction, "
                   "the saving `plan verify` measured on a rewritten sample (scaled to the "
                   "plan), and the one realized right after the commit (the window replayed "
                   "on the snapshots before and after); error = (realized − predicted) / "
                   "predicted. Runs that underdelivered are in red. "
                   + views.sentence(services.pruning_unit(table)["label"]))

st.subheader("Prediction errors (rewrite time)")
with guard(stop=False):
    predictions = plan_service.prediction_history(table)
    if not predictions["runs"]:
        st.caption("No run has recorded a measured rewrite time on this table yet.")
    else:
        st.markdown(views.prediction_summary(predictions["summary"]))
        st.dataframe(views.prediction_frame(predictions["runs"]), hide_index=True,
                     key="prediction_history")
        st.caption("Each run's predicted rewrite time beside its measured wall time; error = "
                   "(predicted − measured) / measured. Runs before `layout-advisor calibrate` "
                   "use the default rates.")

st.subheader("Snapshot history")
if st.session_state.get("flash"):
    st.success(st.session_state.pop("flash"))
with guard():
    history = services.snapshot_history(table)
st.dataframe(history, hide_index=True, key="snapshots_table")
st.caption("From the table's format: the operation, who made it, the plan and its approver "
           "for an advisor rewrite, the data files it added and removed, the rows after it.")
with guard():
    older = services.rollback_targets(table)
if older:
    left, right = st.columns([3, 1])
    target = left.selectbox("Roll back to", older, key="rollback_target")
    right.write("")
    sure = st.checkbox(f"I want snapshot {target} to become the current version",
                       key="rollback_confirm", disabled=not is_admin)
    if right.button("Roll back", disabled=not is_admin or not sure, key="rollback",
                    help="Needs an admin."):
        with guard(stop=False):
            out = services.rollback_table(table, target, actor)
            st.session_state["flash"] = (
                f"Snapshot `{target}` is current again (published as a new rollback snapshot; "
                "no file was deleted)." + (" WAIR's learned state was newer than it and was "
                                           "reset." if out.get("state_reset") else ""))
            st.rerun()
    st.caption("A rollback publishes the chosen version as a new snapshot; the files of newer "
               "versions are kept until an explicit garbage collection.")
else:
    st.caption("No older snapshot differs from the current one: nothing to roll back to.")
