"""``layout-advisor audit ...``: the audit log and its integrity check."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.output import add_json_flag, emit


def audit_line(e: Mapping[str, Any]) -> str:
    """One audit entry as a line (plan transitions and administrative actions alike)."""
    move = (f"  ({e.get('from_status') or '-'} -> {e.get('to_status') or '-'})"
            if e.get("from_status") or e.get("to_status") else "")
    plan = f"  plan {e['plan_id']}" if e.get("plan_id") is not None else ""
    why = f": {e['reason']}" if e.get("reason") else ""
    return f"{e['ts']}{plan}  {e['action']} by {e['actor']}{move}{why}"


def _verify_text(d: Mapping[str, Any]) -> str:
    if d["ok"]:
        return (f"audit log intact: {d['entries']} entries, head {d['head']} (keep this hash "
                "elsewhere to detect a rewrite of the whole log)\n"
                f"root admin key {d.get('root') or 'none yet'} (pin it: `layout-advisor audit "
                "verify --pin FINGERPRINT`)")
    return "\n".join([f"audit log damaged: {len(d['problems'])} problem(s)"]
                     + [f"  {p}" for p in d["problems"]])


def _verify(args: argparse.Namespace, ws: "api.Workspace") -> int:
    report = api.verify_audit(ws, pin=args.pin)
    emit(args, report, _verify_text)
    return 0 if report["ok"] else 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("audit", help="the hash-chained audit log")
    sub = parser.add_subparsers(dest="audit_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("verify", help="check the hash chain and the plans' trail "
                                      "(exit 2 if anything was edited or deleted)")
    p.add_argument("--pin", metavar="FINGERPRINT",
                   help="the root admin's key fingerprint, as a previous verify printed it "
                        "(kept outside the workspace): detects a replaced approvers table")
    add_json_flag(p)
    p.set_defaults(func=_verify)

    p = sub.add_parser("list", help="every entry, oldest first")
    add_json_flag(p)
    p.set_defaults(func=lambda a, s: emit(
        a, api.audit_log(s), lambda rows: "\n".join(audit_line(e) for e in rows)
        or "no audit entries"))
