"""Audit log: every transition and administrative action, and whether the chain is intact.

Read-only (open without signing in, like the other read-only pages). The data comes from
``engine.api`` only: ``audit_log`` (entries, oldest first) and ``verify_audit`` (the hash
chain: an edited, deleted or inserted entry, a plan status set behind
the store's back, a replaced control store). Every user-supplied string (names, reasons)
is shown as text in a table, never rendered as Markdown.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import services
from app.components import guard
from engine import api

st.title("Audit log")
settings = services.settings()

with guard():
    check = api.verify_audit(settings)
    entries = api.audit_log(settings)

if check["ok"]:
    st.success(f"The audit chain is intact: {check['entries']:,} entries, each carrying the "
               "hash of the one before.")
else:
    st.error(f"The audit log was tampered with or damaged: {len(check['problems'])} "
             "problem(s). Run `layout-advisor audit verify` for the same report.")
    st.dataframe(pd.DataFrame({"problem": [str(p) for p in check["problems"]]}),
                 hide_index=True, key="audit_problems")

frame = pd.DataFrame(entries, columns=["id", "ts", "actor", "action", "plan_id", "from_status",
                                       "to_status", "reason", "hash"])
left, mid, right = st.columns(3)
actions = left.multiselect("Actions", sorted(frame["action"].dropna().unique()),
                           key="audit_actions", help="empty: every action")
actor = mid.text_input("Actor contains", key="audit_actor")
plan = right.text_input("Plan id", key="audit_plan", help="empty: every plan and admin entry")

shown = frame
if actions:
    shown = shown[shown["action"].isin(actions)]
if actor.strip():
    shown = shown[shown["actor"].fillna("").str.contains(actor.strip(), regex=False)]
if plan.strip():
    if plan.strip().isdigit():
        shown = shown[shown["plan_id"] == int(plan.strip())]
    else:
        st.warning("The plan id is a whole number; showing every plan.")

st.caption(f"{len(shown):,} of {len(frame):,} entries, newest first. Failed sign-ins, "
           "rollbacks, gc, drops and approver changes have no plan.")
view = shown.iloc[::-1].assign(
    plan_id=shown["plan_id"].iloc[::-1].map(lambda v: "" if pd.isna(v) else str(int(v))),
    transition=[f"{a or ''} → {b or ''}" if (a or b) else ""
                for a, b in zip(shown["from_status"].iloc[::-1], shown["to_status"].iloc[::-1])],
    hash=shown["hash"].iloc[::-1].fillna("").str[:12])
st.dataframe(view[["id", "ts", "actor", "action", "plan_id", "transition", "reason", "hash"]],
             hide_index=True, key="audit_entries",
             column_config={"ts": st.column_config.TextColumn("when (UTC)"),
                            "hash": st.column_config.TextColumn("hash", help="first 12 hex "
                                                                "digits of the entry's hash")})
