"""``layout-advisor plan ...``: create, list, show, approve, reject, run, audit."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, Callable, Mapping

from engine import api
from engine.cli.args import finite, number, positive_int
from engine.cli.audit import audit_line
from engine.cli.auth import add_identity_args, signed_in
from engine.cli.design import add_paw_args, add_pto_design_rows
from engine.cli.output import add_json_flag, emit
from engine.core.errors import AdvisorError
from engine.core.fmt import format_money, format_number, format_seconds, human_bytes


def _declined_text(p: Mapping[str, Any]) -> str:
    """A policy that proposes nothing: why, in plain words with its numbers (cost, saving,
    net, break-even), what would change it, and the policy's own reason."""
    e = p.get("explanation") or {}
    lines = [f"no plan for {p.get('table')} ({p.get('policy')}): "
             f"{e.get('why') or p.get('reason')}"]
    if e.get("what_would_change"):
        lines.append(f"  {e['what_would_change']}")
    reason = str(p.get("reason") or "")
    if e.get("why") and e["why"].rstrip(".").lower() != reason.rstrip(".").lower():  # not twice
        lines.append(f"  (the policy's reason: {reason})")
    return "\n".join(lines)


def _plan_text(p: Mapping[str, Any]) -> str:
    if p.get("status") == "no-action" or (p.get("id") is None and "groups" not in p):
        return _declined_text(p)
    cost = p.get("estimated_cost") or {}
    saving = p.get("predicted_saving") or {}
    head = (f"plan {p['id']}  [{p['status']}]" if p.get("id") is not None
            else "preview (nothing stored)")
    lines = [
        f"{head}  table {p['table']}  policy {p['policy']}  "
        f"base snapshot {p['base_snapshot']}",
        f"  created {p.get('created_at')} by {p.get('created_by')}" if p.get("id") is not None
        else "  `plan create` with the same options stores it as proposed",
        f"  {p.get('partition_count', 0)} partitions in {len(p.get('groups', []))} groups",
        f"  estimated cost: read {human_bytes(cost.get('bytes_read'))}, write "
        f"{human_bytes(cost.get('bytes_written'))}, {format_seconds(cost.get('cpu_seconds'))}, "
        f"{format_money(cost.get('money'), p.get('currency', '$'))}",
        *_cold_line(p.get("predicted_rewrite_seconds") or {}),
        *_price_line(p.get("rewrite_price")),
        f"  predicted saving per window ({saving.get('window_queries', '?')} queries): "
        f"{human_bytes(saving.get('bytes'))}, {format_number(float(saving.get('cpu_seconds', 0) or 0))} CPU-s",
        *([f"    {p['pruning_unit']}"] if p.get("pruning_unit") else []),
        f"  break-even after {p['break_even_queries']:.1f} queries"
        if p.get("break_even_queries") is not None else "  break-even: n/a",
    ]
    output = ((p.get("details") or {}).get("output") or {}).get("groups") or []
    for i, g in enumerate(p.get("groups", [])):
        lines.append(f"  group {i}: {len(g['partitions'])} partitions, {g['layout']} on "
                     f"{', '.join(g['columns'])}" + (f" - {g['reason']}" if g.get("reason") else ""))
        if i < len(output):
            lines.append(f"    writes {_shape_text(output[i])}")
    checked_output = (p.get("details") or {}).get("output") or {}
    if checked_output.get("files_note"):  # the output keeps every file: where the saving comes from
        lines.append(f"  output: {checked_output['files_note']}")
    elif checked_output.get("reason") and checked_output.get("delivers") is False:
        lines.append(f"  output: {checked_output['reason']}")  # a design the check cannot model
    checked = p.get("verification")
    if checked:
        ratio = checked.get("ratio")
        lines.append(f"  verified {checked.get('verified_at')} by {checked.get('verified_by')}: "
                     f"saving {human_bytes(checked.get('verified_saving_bytes'))} per window"
                     + (f" ({ratio:.0%} of predicted)" if ratio is not None else ""))
    prog = p.get("progress")
    if prog:
        lines.append(f"  progress: {prog.get('groups_done')}/{prog.get('groups_total')} groups, "
                     f"{prog.get('rows')} rows, {human_bytes(prog.get('bytes'))}: {prog.get('message')}")
    result = p.get("result")
    if result:
        if result.get("error"):
            lines.append(f"  error: {result['error']}")
        if result.get("snapshot_id"):
            lines.append(f"  result: snapshot {result['snapshot_id']}, "
                         f"{result.get('partitions_removed')} -> {result.get('partitions_added')}"
                         f" partitions, {result.get('rows')} rows, {result.get('seconds')} s")
        check = result.get("cost_check") or {}
        if check:
            session = {True: " (fresh session: the cold figure)" if check.get(
                           "compared_with") == "cold" else " (fresh session, no cold figure)",
                       False: " (warm session)"}.get(check.get("fresh_session"), "")
            lines.append(
                f"  rewrite cost, predicted vs measured{session}: "
                f"{format_seconds(check.get('predicted_seconds'))}"
                f" vs {format_seconds(check.get('measured_wall_seconds'))} wall "
                f"({format_seconds(check.get('measured_cpu_seconds'))} executor CPU, "
                f"{human_bytes(check.get('measured_bytes_read'))} read, "
                f"{human_bytes(check.get('measured_bytes_written'))} written); "
                f"{format_money(check.get('predicted_money'), p.get('currency', '$'))} vs "
                f"{format_money(check.get('measured_money'), p.get('currency', '$'))}")
        real = result.get("realized") or {}
        if "saving_bytes" in real:
            lines.append(f"  realized over {real['queries']} queries: "
                         f"{human_bytes(real['saving_bytes'])} saved ({human_bytes(real['bytes_before'])}"
                         f" -> {human_bytes(real['bytes_after'])});"
                         f" predicted {human_bytes(real['predicted_saving_bytes'])}")
            if p.get("realized_unit"):
                lines.append(f"    {p['realized_unit']}")
        verdict = result.get("delivery") or {}
        if verdict.get("underdelivered"):
            lines.append(f"  UNDERDELIVERED: {verdict.get('reason')}")
            if verdict.get("rolled_back_to"):
                lines.append(f"  rolled back at once: the table is at snapshot "
                             f"{verdict['rolled_back_to']}, equal to the plan's base")
            elif verdict.get("kept_because"):
                lines.append(f"  not rolled back: {verdict['kept_because']}")
            else:
                lines.append(f"  undo: layout-advisor table rollback {p.get('table')} "
                             f"{result.get('base_snapshot')} --as ADMIN")
    audit = p.get("audit") or []
    if audit:
        lines.append("  audit:")
        lines.extend(f"    {audit_line(e)}" for e in audit)
    return "\n".join(lines)


def _shape_text(shape: Mapping[str, Any]) -> str:
    """One group's output shape as the executor writes it (engine.layout.output).

    >>> _shape_text({"files": 4, "rows_per_file": 1500, "row_groups_per_file": 1,
    ...              "row_group_rows": 1500, "file_rule": "input granularity: the median "
    ...              "input file holds 1,500 rows", "row_group_rule": "one row group per file"})
    '4 files of 1,500 rows (input granularity: the median input file holds 1,500 rows), 1 row group each (one row group per file)'
    """
    groups = int(shape.get("row_groups_per_file") or 1)
    each = ("1 row group each" if groups == 1
            else f"{groups} row groups of {int(shape.get('row_group_rows') or 0):,} rows each")
    return (f"{shape.get('files')} files of {int(shape.get('rows_per_file') or 0):,} rows "
            f"({shape.get('file_rule')}), {each} ({shape.get('row_group_rule')})")


def _price_line(price: Mapping[str, Any] | None) -> list[str]:
    """Which rewrite price per cell the plan was priced with: the table's own
    (``calibrate --rewrite-on``) or the calibration table's; nothing for a plan priced before.

    >>> _price_line({"source": "table", "cell_bytes": 3.51,
    ...              "label": "table lineitem's own price, measured 2026-11-27 (snapshot 2)"})
    ["  rewrite priced at 3.51 B per cell: table lineitem's own price, measured 2026-11-27 (snapshot 2)"]
    >>> _price_line(None)
    []
    """
    if not price:
        return []
    cell = float(price.get("cell_bytes") or 0.0)
    head = f"rewrite priced at {cell:.2f} B per cell" if cell > 0 else "rewrite priced"
    return [f"  {head}: {price.get('label')}"]


def _cold_line(predicted: Mapping[str, Any]) -> list[str]:
    """The predicted rewrite time warm and in a fresh Spark session (``show_plan``'s
    ``predicted_rewrite_seconds``), when the plan was priced with a calibrated cold start;
    no line otherwise.

    >>> _cold_line({"warm": 2.0, "cold": 9.5, "cold_start_s": 7.5})
    ['  predicted rewrite time: 2 s in a warm session (the dashboard after its first run), 9.5 s in a fresh one (`plan run` from the CLI: +7.5 s cold start)']
    >>> _cold_line({"warm": 2.0, "cold": None, "cold_start_s": 0.0})
    []
    """
    if not predicted.get("cold"):
        return []
    return [f"  predicted rewrite time: {format_seconds(predicted['warm'])} in a warm session "
            f"(the dashboard after its first run), {format_seconds(predicted['cold'])} in a "
            f"fresh one (`plan run` from the CLI: +{format_seconds(predicted['cold_start_s'])} "
            "cold start)"]


def _list(a: argparse.Namespace, s: Any) -> None:
    rows = api.list_plans(s, a.table)
    if a.table and not rows:  # a mistyped name: the one line naming the known tables
        api.table_info(s, a.table)
    emit(a, [r.to_json() for r in rows], _list_text)


def _list_text(rows: list[Mapping[str, Any]]) -> str:
    if not rows:
        return "no plans"
    head = f"{'id':>4}  {'status':<10} {'table':<16} {'policy':<6} {'groups':>6} {'parts':>6} " \
           f"{'cost CPU-s':>10} {'saving CPU-s':>12}  created"
    out = [head]
    for r in rows:
        out.append(f"{r['id']:>4}  {r['status']:<10} {r['table']:<16} {r['policy']:<6} "
                   f"{r['groups']:>6} {r['partitions']:>6} {format_number(r['estimated_cpu_seconds']):>10} "
                   f"{format_number(r['predicted_saving_cpu_seconds']):>12}  {r['created_at']}"
                   + ("  UNDERDELIVERED" if r.get("underdelivered") else ""))
    return "\n".join(out)


def _busier_text(out: Mapping[str, Any]) -> str:
    """``plan preview --busier``: the factor at which WAIR proposes, and that plan."""
    steps = ", ".join(f"x{format_number(s['factor'])}" for s in out.get("steps") or [])
    if out.get("plan") is None:
        return (f"WAIR proposes nothing even if each query of its window ran "
                f"{format_number(out['factor'])} times (tried {steps})")
    if not out.get("steps"):
        return "WAIR proposes a plan on the window as it is:\n" + _plan_text(out["plan"])
    plan = out["plan"]
    # (the --alpha of the command stays a plain float to paste: no thousands separator)
    return (f"WAIR proposes this plan if each query of its window runs {format_number(out['factor'])} "
            f"times (equation 4 at alpha {format_number(out['alpha'])}; declined at {steps}):\n"
            + _plan_text(plan) + f"\n  store it with `layout-advisor plan create {plan['table']} "
            f"--alpha {out['alpha']:.3g}` (the other parameters as given here)")


def _params(args: argparse.Namespace) -> dict[str, Any]:
    return {"window": args.window, "max_window": args.max_window, "alpha": args.alpha, "beta": args.beta,
              "cost_limit": args.cost_limit, "k_max": args.k_max, "eps": args.eps,
              "min_samples": args.min_samples, "key": args.key,
              "delta": args.delta, "b_min_rows": args.b_min_rows, "psi": args.psi,
              "n_mbr": args.n_mbr, "refine": args.refine, "max_design_rows": args.max_design_rows,
              "open_cost_offset": args.open_cost_offset}


def _with_unit(ws: "api.Workspace", data: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's JSON with the unit its pruning figures count (:func:`engine.api.pruning_unit`):
    ``pruning_unit`` for the prediction (the plan's base snapshot), ``realized_unit`` for a
    run's realized figures (its new snapshot, when still readable)."""
    out = dict(data)
    if out.get("status") == "no-action" or not out.get("table"):
        return out
    with contextlib.suppress(AdvisorError):
        out["pruning_unit"] = api.pruning_unit(ws, out["table"], out.get("base_snapshot")).label()
    snapshot = (out.get("result") or {}).get("snapshot_id")
    if snapshot:
        with contextlib.suppress(AdvisorError):
            out["realized_unit"] = api.pruning_unit(ws, out["table"], str(snapshot)).label()
    return out


def _preview(args: argparse.Namespace, ws: "api.Workspace") -> int:
    """``plan preview``: what ``plan create`` would store, nothing stored; ``--busier``:
    the busier-workload what-if (WAIR only)."""
    if args.busier:
        if args.policy != "wair":
            print("layout-advisor: error: --busier: the busier-workload what-if is WAIR's "
                  f"(equation 4), not {args.policy}'s", file=sys.stderr)
            return 2
        emit(args, api.busier_preview(ws, args.table, _params(args)), _busier_text)
    else:
        emit(args, _with_unit(ws, api.preview_plan(ws, args.table, args.policy,
                                                   _params(args)).to_json()), _plan_text)
    return 0


def _create(args: argparse.Namespace, ws: "api.Workspace") -> int:
    params = _params(args)
    if args.actor:  # a named proposer signs in: nobody proposes in someone else's name
        with signed_in(args, ws) as identity:
            result = api.create_plan(ws, args.table, policy=args.policy,
                                     params=params, created_by=identity)
    else:
        result = api.create_plan(ws, args.table, policy=args.policy, params=params)
    emit(args, _with_unit(ws, result.to_json()), _plan_text)
    return 0


def _run(args: argparse.Namespace, ws: "api.Workspace") -> int:
    def progress(event: Mapping[str, Any]) -> None:
        print(f"[{event['groups_done']}/{event['groups_total']}] {event['message']}",
              file=sys.stderr, flush=True)

    with signed_in(args, ws) as identity:
        try:
            api.run_plan(ws, args.id, progress=progress, actor=identity,
                         rollback_if_worse=args.rollback_if_worse or None)
        except api.RunCancelled:
            api.settle_cancelled(ws, args.id)  # the canceller may have settled it already
            raise
    emit(args, _with_unit(ws, api.show_plan(ws, args.id).to_json()), _plan_text)
    return 0


def _show(args: argparse.Namespace, ws: "api.Workspace") -> int:
    """``plan show ID``: the plan, its run and its verification (``plan verify``)."""
    shown = {**_with_unit(ws, api.show_plan(ws, args.id).to_json()),
             "verification": api.verification(ws, args.id)}
    emit(args, shown, _plan_text)
    return 0


def _verify(args: argparse.Namespace, ws: "api.Workspace") -> int:
    """``plan verify ID --as NAME``: the plan's promise checked on a rewritten sample."""
    with signed_in(args, ws) as identity:
        out = api.verify_plan(ws, args.id, identity, files=args.files)
    emit(args, out.to_json(), lambda _: out.line())
    return 0


def _cancel(args: argparse.Namespace, ws: "api.Workspace") -> int:
    """``plan cancel ID --as NAME``: stop a running plan (from any process) and wait for it."""
    with signed_in(args, ws) as identity:
        out = api.cancel_plan(ws, args.id, identity, args.reason, wait_s=args.wait)
    emit(args, out, _cancel_text)
    return 0


def _cancel_text(out: Mapping[str, Any]) -> str:
    """What became of the cancel request."""
    if out.get("cancelled"):
        return (f"plan {out['id']} cancelled by {out.get('by')} at {out.get('at')}: nothing was "
                "committed and the table is at its previous snapshot")
    if out.get("status") == "running":
        return (f"plan {out['id']}: cancel requested by {out.get('by')}; the run has not stopped "
                "yet (it stops before its commit)")
    return f"plan {out['id']} is {out.get('status')}: the cancel came too late"


_DECISIONS = {"approve": "approved", "reject": "rejected"}


def _decide(action: str) -> Callable[[argparse.Namespace, Any], int]:
    """The command of ``plan approve`` / ``plan reject``: record the decision, say who made it."""
    def run(args: argparse.Namespace, ws: "api.Workspace") -> int:
        decide = api.approve_plan if action == "approve" else api.reject_plan
        with signed_in(args, ws) as identity:
            shown = decide(ws, args.id, identity, args.reason).to_json()
        emit(args, shown, lambda d: _decision_text(d, action, identity.name))
        return 0
    return run


def _decision_text(plan: Mapping[str, Any], action: str, name: str) -> str:
    """'plan 3 approved by bob', or that a first approval of two was recorded."""
    if action == "approve" and plan.get("status") == "proposed":
        return (f"plan {plan['id']}: approval by {name} recorded; it needs a second, "
                "different approver (dual approval)")
    return f"plan {plan['id']} {_DECISIONS[action]} by {name}"


def _policy_args(p: argparse.ArgumentParser) -> None:
    """The table, the policy and its parameters: ``plan create`` and ``plan preview``."""
    p.add_argument("table")
    p.add_argument("--policy", default="wair", choices=api.policy_names())
    p.add_argument("--window", type=positive_int, help="queries in the sliding window")
    p.add_argument("--max-window", dest="max_window", type=positive_int,
                   help="WAIR's largest window (default 10,000 queries): raise it to decide on a longer log")
    # finite here; each policy checks its own ranges (one rule, shared with the dashboard)
    p.add_argument("--alpha", type=finite, help="WAIR aggressiveness (eq. 4); PAW: split policy Ψ's α (> 1)")
    p.add_argument("--beta", type=finite,
                   help="WAIR performance bonus, CPU-s per pruned partition")
    p.add_argument("--cost-limit", dest="cost_limit", type=number(low=0, inf_ok=True),
                   help="WAIR cost limit, CPU-seconds of outstanding debt (eq. 2)")
    p.add_argument("--k-max", dest="k_max", type=positive_int, help="max partitions per group")
    p.add_argument("--eps", type=finite, help="DBSCAN cosine radius of savings signatures")
    p.add_argument("--min-samples", dest="min_samples", type=positive_int,
                   help="DBSCAN min_samples")
    p.add_argument("--key", help="clustering key (DD, DD-EP; WAIR: one fixed key)")
    add_paw_args(p, defaults=False)  # --delta, --b-min-rows, --psi, --refine, --n-mbr
    add_pto_design_rows(p)  # --max-design-rows, --open-cost-offset


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = subparsers.add_parser("plan", help="reclustering plans: create, approve, run")
    sub = plan.add_subparsers(dest="plan_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("create", help="ask a policy for a plan and store it as proposed")
    _policy_args(p)
    add_identity_args(p, required=False, who="proposer (default: the OS user; a proposer "
                                             "cannot approve the plan): signed in,")
    add_json_flag(p)
    p.set_defaults(func=_create)

    p = sub.add_parser("preview", help="what `plan create` would store; nothing is stored")
    _policy_args(p)
    p.add_argument("--busier", action="store_true",
                   help="WAIR: how many times each query of its window must run before it "
                        "proposes a plan, and that plan (equation 4 at alpha / k)")
    add_json_flag(p)
    p.set_defaults(func=_preview)

    p = sub.add_parser("list", help="list plans")
    p.add_argument("--table")
    add_json_flag(p)
    p.set_defaults(func=_list)

    p = sub.add_parser("show", help="show one plan")
    p.add_argument("id", type=int)
    add_json_flag(p)
    p.set_defaults(func=_show)

    for action in _DECISIONS:  # the two decisions take the same arguments
        p = sub.add_parser(action, help=f"{action} a proposed plan")
        p.add_argument("id", type=int)
        add_identity_args(p)
        p.add_argument("--reason")
        add_json_flag(p)
        p.set_defaults(func=_decide(action))

    p = sub.add_parser("run", help="run an approved plan on Spark (progress on stderr)")
    p.add_argument("id", type=int)
    add_identity_args(p)
    p.add_argument("--rollback-if-worse", dest="rollback_if_worse", action="store_true",
                   help="roll the table back at once when the run underdelivers (realized "
                        "saving negative or below min_realized_ratio of the prediction)")
    add_json_flag(p)
    p.set_defaults(func=_run)

    p = sub.add_parser("verify", help="rewrite a sample of a plan into a scratch folder as the "
                                      "run would, measure the window on it, store the result")
    p.add_argument("id", type=int)
    p.add_argument("--files", type=positive_int, default=64,
                   help="input files to rewrite at most (whole groups; default 64)")
    add_identity_args(p)
    add_json_flag(p)
    p.set_defaults(func=_verify)

    p = sub.add_parser("cancel", help="stop a running plan: nothing is committed")
    p.add_argument("id", type=int)
    add_identity_args(p)
    p.add_argument("--reason")
    p.add_argument("--wait", type=float, default=120.0,
                   help="seconds to wait for the run to stop (default 120)")
    add_json_flag(p)
    p.set_defaults(func=_cancel)

    p = sub.add_parser("audit", help="the append-only audit log")
    p.add_argument("id", type=int, nargs="?")
    add_json_flag(p)
    p.set_defaults(func=lambda a, s: emit(
        a, api.audit_log(s, a.id),
        lambda rows: "\n".join(audit_line(e) for e in rows) or "no audit entries"))
