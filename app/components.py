"""Widgets several pages share: the table and snapshot pickers, the error guard, the
"no table yet" stop. No engine imports here: data comes from :mod:`app.services`, labels
and number formats from :mod:`app.views`."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import streamlit as st

from app import charts, glossary, plan_service, services, views

TABLE_KEY = "table"
SNAPSHOT_KEY = "snapshot_choice"
CURRENT = "current"


@contextlib.contextmanager
def guard(stop: bool = True) -> Iterator[None]:
    """Show a user mistake as ``st.error`` with its reason (never a traceback)."""
    try:
        yield
    except services.AdvisorError as exc:
        st.error(views.md_text(exc))
        if stop:
            st.stop()


def sidebar_pickers(default_table: str | None = None) -> None:
    """Table and snapshot pickers in the sidebar; they set session state for every page."""
    st.session_state.pop(services.RUN_CURRENT_KEY, None)  # read afresh on every run
    with st.sidebar:
        try:
            labels_by_table = services.table_labels()
            tables = list(labels_by_table)
        except services.AdvisorError as exc:
            st.error(f"Cannot list tables: {views.md_text(exc)}")
            return
        if not tables:
            st.info("No table in this workspace yet. Create one with "
                    "`layout-advisor table create NAME --from PARQUET_PATH` or run `layout-advisor demo`.")
            st.session_state[TABLE_KEY] = None
            return
        current = st.session_state.get(TABLE_KEY)
        if current not in tables:
            current = default_table if default_table in tables else tables[0]
            st.session_state[TABLE_KEY] = current
        st.selectbox("Table", tables, key=TABLE_KEY, format_func=lambda n: labels_by_table.get(n, n),
                     help="Every page shows this table, with its format and catalog.")
        try:
            snaps = services.table_snapshots(st.session_state[TABLE_KEY])
            services.remember_current(st.session_state[TABLE_KEY], snaps)
        except services.AdvisorError as exc:
            st.error(views.md_text(exc))
            return
        options = [CURRENT] + [str(s) for s in snaps["id"]] if not snaps.empty else [CURRENT]
        labels = {CURRENT: "current"}
        for _, row in snaps.iterrows():
            op = row.get("operation", "")
            when = str(row.get("created_at", ""))[:19].replace("T", " ")
            tag = " (current)" if bool(row.get("current")) else ""
            labels[str(row["id"])] = f"{str(row['id'])[:12]} · {op} · {when}{tag}"
        if st.session_state.get(SNAPSHOT_KEY) not in options:
            st.session_state[SNAPSHOT_KEY] = CURRENT
        st.selectbox("Snapshot", options, key=SNAPSHOT_KEY, format_func=lambda o: labels.get(o, o),
                     help="Read an older version of the table; plans always start from the current one.")
        st.caption(f"Workspace: {views.md_text(services.home())}")
        try:
            sign_in_box()
        except services.AdvisorError as exc:  # e.g. control.db missing beside reclustered tables
            st.error("Signing in, approving, running and rolling back are unavailable: "
                     f"{views.md_text(exc)}")
        glossary_drawer()


IDENTITY_KEY = "identity"
#: what became of the OIDC account st.user holds in this browser session:
#: ``(iss, sub, outcome)`` with outcome "linked", "unlinked", "refused" or "expired"
OIDC_KEY = "oidc_outcome"


def signed_in() -> Any:
    """The signed-in approver's identity (None when nobody is, or the session expired)."""
    identity = st.session_state.get(IDENTITY_KEY)
    if identity is not None and not services.session_alive(identity):
        st.session_state[IDENTITY_KEY] = None
        st.session_state["signin_notice"] = "Your session expired; sign in again."
        outcome = st.session_state.get(OIDC_KEY)
        if outcome is not None:  # a provider sign-in: sign in at the provider again
            st.session_state[OIDC_KEY] = (*outcome[:2], "expired")
        return None
    return identity


def oidc_user() -> dict[str, Any] | None:
    """The claims of the person signed in through ``st.login`` (None when nobody is, or
    when no ``[auth]`` is configured)."""
    try:
        if not st.user.get("is_logged_in"):
            return None
        return st.user.to_dict()
    except (AttributeError, KeyError):  # pragma: no cover - Streamlit without st.user
        return None


def _map_oidc(claims: dict[str, Any]) -> Any:
    """Sign the provider's account in as its linked approver, once per account and browser
    session (each attempt is audited, so a rerun must not repeat it)."""
    account = (str(claims.get("iss", "")), str(claims.get("sub", "")))
    seen = st.session_state.get(OIDC_KEY)
    if seen is not None and tuple(seen[:2]) == account:
        return None
    try:
        identity = services.sign_in_oidc(claims)
    except services.AdvisorError as exc:
        st.session_state[OIDC_KEY] = (*account, "refused")
        st.session_state["signin_notice"] = views.md_text(exc)
        return None
    st.session_state[OIDC_KEY] = (*account, "linked" if identity else "unlinked")
    st.session_state[IDENTITY_KEY] = identity
    return identity


def _oidc_reader_box(claims: dict[str, Any]) -> None:
    """A provider account that may read only: why, how an admin links it, sign out."""
    who = claims.get("email") or claims.get("sub")
    outcome = (st.session_state.get(OIDC_KEY) or ("", "", "unlinked"))[2]
    st.caption(f"Signed in with {views.md_text(claims.get('provider') or 'your provider')} as "
               f"**{views.md_text(who)}**: read-only")
    if notice := st.session_state.pop("signin_notice", None):
        st.info(notice)
    if outcome == "expired":
        st.info("Your approver session expired after inactivity: sign out, then sign in with "
                "your provider again.")
    if outcome == "unlinked":
        st.info("No approver is linked to this account, so approving, running and rolling "
                "back are refused. An admin can link it:")
        st.code(f"layout-advisor approvers link NAME --oidc {claims.get('iss')} "
                f"{claims.get('sub')} --as ADMIN", language="bash")
    if st.button("Sign out", key="oidc_signout"):
        st.session_state[OIDC_KEY] = None
        st.logout()


def sign_in_box() -> None:
    """Sign in (or out) as an approver: approving, running and rolling back need it;
    reading needs nothing. With ``[auth]`` in Streamlit's secrets, "Sign in with ..."
    (``st.login``) signs in the approver linked to the provider's account; the approvers'
    password sign-in stays available below it."""
    identity = signed_in()
    claims = oidc_user()
    if identity is None and claims is not None:
        identity = _map_oidc(claims)
    if identity is not None:
        via = ""
        if claims is not None and st.session_state.get(OIDC_KEY):
            via = " with " + views.md_text(claims.get("provider") or "OIDC")
        st.caption(f"Signed in as **{views.md_text(identity.name)}** ({identity.role}){via}")
        if st.button("Sign out", key="signout"):
            services.sign_out(identity)
            st.session_state[IDENTITY_KEY] = None
            if claims is not None:
                st.session_state[OIDC_KEY] = None
                st.logout()
                st.stop()  # not st.rerun(): a rerun can drop logout's redirect to the provider
            st.rerun()
        return
    if claims is not None:
        _oidc_reader_box(claims)
        return
    with st.expander("Sign in to approve", icon=":material/login:",
                     expanded=bool(st.session_state.get("signin_notice"))):
        if notice := st.session_state.pop("signin_notice", None):
            st.info(notice)
        if not services.has_admin():
            st.info("No approver exists in this workspace yet. Create the first admin with "
                    "`layout-advisor approvers add NAME --admin`.")
        for provider, label in services.oidc_providers():
            if st.button(f"Sign in with {label}", key=f"oidc_login_{provider or 'default'}"):
                if provider:
                    st.login(provider)
                else:
                    st.login()
        name = st.text_input("Approver", key="signin_name")
        secret = st.text_input("Secret", type="password", key="signin_secret")
        if st.button("Sign in", key="signin", disabled=not name or not secret):
            try:
                st.session_state[IDENTITY_KEY] = services.sign_in(name, secret)
            except services.AdvisorError as exc:
                st.session_state["signin_notice"] = views.md_text(exc)
            st.rerun()


def glossary_drawer() -> None:
    """Every term the pages use, in plain words with its paper reference, searchable.

    One markdown element for all the terms, not one each: the drawer is in every page's
    sidebar, and one element per term would be a large share of what a page load sends and
    renders (bench/ui/README.md)."""
    with st.expander("Glossary", icon=":material/menu_book:"):
        needle = st.text_input("Find a term", key="glossary_search", placeholder="e.g. boundary")
        terms = glossary.search(needle or "")
        if not terms:
            st.caption("No term matches.")
        else:
            st.markdown("\n\n".join(f"**{term.name}**: {term.meaning} *({term.source})*"
                                     for term in terms))


def selected_table() -> str | None:
    return st.session_state.get(TABLE_KEY)


def selected_snapshot() -> str | None:
    """The chosen snapshot id, or None for the current one."""
    choice = st.session_state.get(SNAPSHOT_KEY, CURRENT)
    return None if choice in (None, CURRENT) else str(choice)


def require_table() -> str:
    """The selected table, or stop the page with what to do next."""
    table = selected_table()
    if not table:
        st.info("No table selected. Create one with `layout-advisor table create NAME --from PARQUET_PATH` "
                "or build the demo table with `layout-advisor demo`.")
        st.stop()
    return table


def wair_state_panel(table: str) -> None:
    """What WAIR remembers on ``table`` (window, credit, debt, window closes) and, for a
    signed-in approver, a reset: learned state explains why a plan is allowed or not."""
    with guard(stop=False):
        state = plan_service.wair_state(table)
        with st.expander("What WAIR remembers on this table", icon=":material/memory:"):
            if not state["saved"]:
                st.caption("Nothing yet: the next decision starts from the parameters above "
                           "(window, no credit, no debt).")
                return
            a, b, c, d = st.columns(4)
            a.metric("Window now", f"{state['window_size']:,} queries",
                     help="Adapted after each completed window: doubled when realized savings "
                          "beat the prediction or nothing happened, halved otherwise (section 4.2).")
            b.metric("Runs fed back", f"{state['runs']:,}")
            c.metric("Credit (net of past rewrites)", views.fmt_seconds(state["credit_cpu_s"]) + " CPU",
                     help="Realized savings minus reclustering costs (eq. 5, before the "
                          "per-query allowance c).")
            d.metric("Debt", views.fmt_seconds(state["debt_cpu_s"]) + " CPU",
                     help="Reclustering cost not yet paid back by realized savings (eq. 2).")
            frame = views.wair_state_frame(state)
            if not frame.empty:
                st.dataframe(frame, hide_index=True, key="wair_windows")
            identity = signed_in()
            reason = st.text_input("Reason for a reset (audited)", key="wair_reset_reason")
            if st.button("Reset WAIR's memory", key="wair_reset", disabled=identity is None,
                         help="Needs a signed-in approver. The next decision then starts fresh."):
                with guard(stop=False):
                    plan_service.reset_wair_state(table, identity, reason)
                    st.session_state["wair_reset_done"] = True
                    st.rerun()
            if st.session_state.pop("wair_reset_done", False):
                st.success("WAIR's memory on this table was reset.")
            st.caption("A rollback to a snapshot older than this memory resets it too.")


def hybrid_layout_chart(table: str, plan: Any, key: str) -> None:
    """Draw which partitions a plan's groups rewrite with which layout, on a chosen column."""
    groups = plan.get("groups") or []
    columns = list(dict.fromkeys(c for g in groups for c in g.get("columns", [])))
    if not groups or not columns:
        return
    column = st.selectbox("Draw the layout on column", columns, key=f"{key}_column")
    with guard(stop=False):
        zm = services.snapshot(table, plan.get("base_snapshot")).zonemaps()
        assignment = views.group_assignment(zm, groups, column)
        st.plotly_chart(charts.group_layout(assignment, column, views.NOT_REWRITTEN), key=key)
        st.caption("Each line is a partition's range on the column, coloured by the group "
                   "that rewrites it (layout and key); grey partitions stay as they are.")


def require_workload(table: str, why: str) -> None:
    """Stop the page with what to do when ``table`` has no imported workload."""
    with guard():
        has_workload = bool(services.fragments(table))
    if not has_workload:
        st.info(f"{why}, and **{table}** has none yet. Import a query log with "
                f"`layout-advisor workload import {table} FILE`, then reload this page.")
        st.stop()


def run_unit(plan: Any) -> str | None:
    """The unit line of a run's figures: what the pruning counts of its new snapshot count
    (:func:`engine.api.pruning_unit`); None when that snapshot cannot be read (expired)."""
    snapshot = (plan.get("result") or {}).get("snapshot_id")
    if not snapshot:
        return None
    try:
        return services.pruning_unit(plan["table"], str(snapshot))["label"]
    except services.AdvisorError:
        return None


def savings_report(report: Any, label: str, key: str, ratio_label: str,
                   predicted_label: str = "predicted", unit: str | None = None) -> None:
    """One scope of a run's saving (re-estimated or realized) as four metrics and the
    predicted-against-measured table, then ``unit`` (:func:`run_unit`); the page writes
    the caption saying which queries."""
    a, b, c, d = st.columns(4)
    a.metric("Bytes these queries scan", views.fmt_bytes(report["bytes_after"]),
             delta=f"-{views.fmt_bytes(report['saving_bytes'])}", delta_color="inverse")
    b.metric("Partitions scanned", f"{report['partitions_scanned_after']:,}",
             delta=f"{report['partitions_scanned_after'] - report['partitions_scanned_before']:,}",
             delta_color="inverse", help=unit)
    c.metric(label[:1].upper() + label[1:], views.fmt_seconds(report["saving_cpu_seconds"]) + " CPU")
    ratio = report.get("realized_over_predicted")
    d.metric(ratio_label, f"{ratio * 100:.0f} %" if ratio is not None else "–")
    st.dataframe(views.realized_frame(report, label, predicted_label), hide_index=True, key=key)
    if unit:
        st.caption(views.sentence(unit))


def realized_later(plan: Any) -> None:
    """The saving of a succeeded run over the queries imported AFTER it (WAIR section 4.3), or
    what is still missing; the log's measured bytes and durations beside the estimate."""
    st.markdown(f"#### {views.REALIZED_LABEL[:1].upper() + views.REALIZED_LABEL[1:]}")
    with guard(stop=False):
        later = plan_service.realized_savings(plan["id"], plan["table"])
        status = later.get("status")
        if status == "unknown":
            st.caption("This run did not record where it stood in the query log (it predates "
                       "the measurement of later queries), so no later query can be told apart.")
            return
        if status != "measured":
            need = int(later.get("queries_needed_to_learn") or 0)
            st.info("No query has been imported since this run. Import the later query log "
                    f"(`layout-advisor workload import {plan['table']} FILE --append`); the "
                    "realized saving is measured on those queries, and WAIR learns from the "
                    f"first {need:,} of them at its next decision.")
            return
        n = int(later["queries"])
        savings_report(later, views.REALIZED_LABEL, key="plan_realized_later",
                       ratio_label="Realized / predicted", predicted_label=f"predicted (scaled to {n:,} queries)",
                       unit=run_unit(plan))
        st.caption(f"The {n:,} queries imported after the run, scored on the zonemaps of the "
                   "snapshot before and after it; the prediction is scaled from "
                   f"{int(plan['predicted_saving'].get('window_queries') or 0):,} queries to "
                   f"{n:,}. WAIR learns from the first "
                   f"{int(later.get('queries_needed_to_learn') or 0):,} (eq. 5, section 4.2).")
        log = views.log_check_frame(later.get("log") or {})
        if not log.empty:
            st.dataframe(log, hide_index=True, key="plan_realized_log")
            st.caption("Where the imported log carries measured bytes scanned and durations, "
                       "they stand beside the zonemap estimate for the new snapshot.")


def declined_panel(table: str, rec: Any, params: Any = None, key: str = "declined") -> None:
    """A policy that proposes nothing, in plain words: its cost, saving, net and break-even
    (the engine's explanation), what would change it, and for WAIR a button for the
    busier-workload what-if (how many runs of each query it takes to propose, and what)."""
    explanation = rec.get("explanation") or {}
    refused = views.refused_net_of_losses(rec)
    who = str(rec.get("policy") or "wair").upper()
    head = (f"{who} refused a plan: net of the losses it predicts for other queries, its saving "
            "is not positive." if refused else f"{who} proposes nothing right now.")
    st.info(f"**{head}** {views.md_text(explanation.get('why', ''))}\n\n"
            f"**What would change it:** {views.md_text(explanation.get('what_would_change', ''))}")
    if refused:
        losses = views.regressions_frame((rec.get("details") or {}).get("regressions"))
        if not losses.empty:
            st.dataframe(losses, hide_index=True, key=f"{key}_refused_regressions")
            st.caption("The predicted losses that outweighed the saving, per column the "
                       "refused plan would disorder.")
    st.caption(f"Technical reason: {views.md_text(rec.get('reason'))}")
    if str(rec.get("policy") or "wair").lower() != "wair":
        return
    if st.button("What if the workload were busier?", key=f"{key}_busier",
                 help="Previews WAIR as if each query of its window ran k times (equation "
                      "4 at alpha / k), stepping up from the break-even until it proposes. "
                      "Nothing is stored."):
        with guard(stop=False), st.spinner("Previewing WAIR at busier rates..."):
            st.session_state[f"{key}_busier_out"] = plan_service.busier_preview(table, params)
    out = st.session_state.get(f"{key}_busier_out")
    if out:
        st.markdown(views.busier_text(out))  # the engine's numbers, no user text
