"""``layout-advisor workload ...``: import a query log, show the scan fragments, clear them."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.auth import add_identity_args, signed_in
from engine.cli.output import add_json_flag, aligned, emit

MAX_SKIPPED_SHOWN = 10


def _import_text(r: Mapping[str, Any]) -> str:
    skipped = r.get("skipped_count", len(r["skipped"]))
    lines = [f"imported {r['file']} into {r['table']}: {r['statements']} statements, "
             f"{r['fragments']} fragments, {skipped} skipped"
             + (f", {r['ignored']} not reading {r['table']}" if r.get("ignored") else "")]
    for item in r["skipped"][:MAX_SKIPPED_SHOWN]:
        lines.append(f"  skipped line {item['line']}: {item['reason']}")
    if skipped > MAX_SKIPPED_SHOWN:
        listed = len(r["skipped"])
        lines.append(f"  ... and {skipped - MAX_SKIPPED_SHOWN} more (--json lists "
                     + ("all)" if listed == skipped else f"the first {listed})"))
        for reason, count in sorted(r.get("skip_reasons", {}).items(), key=lambda kv: -kv[1]):
            lines.append(f"  {count} skipped: {reason}")
    return "\n".join(lines)


def _show_text(table: str, rows: list[dict]) -> str:
    if not rows:
        return (f"no workload for {table} (import one with "
                f"`layout-advisor workload import {table} FILE`)")
    out = [[r["query_id"], r["ts"] or "-", str(len(r["columns"])), api.predicate_text(r["boxes"]),
            api.source_text(r.get("sources") or [])] for r in rows]
    return f"{len(rows)} scan fragments of {table}\n" + aligned(
        ["query_id", "ts", "cols", "predicate", "source"], out)


def _do_import(args: argparse.Namespace, ws: "api.Workspace") -> int:
    report = api.import_workload(ws, args.table, args.file, dialect=args.dialect,
                                 strict=args.strict, replace=args.replace,
                                 append=args.append)
    emit(args, report, _import_text)
    return 0


def _do_show(args: argparse.Namespace, ws: "api.Workspace") -> int:
    rows = api.show_workload(ws, args.table)
    emit(args, rows, lambda data: _show_text(args.table, data))
    return 0


def _do_clear(args: argparse.Namespace, ws: "api.Workspace") -> int:
    with signed_in(args, ws) as identity:
        api.clear_workload(ws, args.table, actor=identity)
    print(f"cleared the workload of {args.table}")
    return 0


def _do_lint(args: argparse.Namespace, ws: "api.Workspace") -> int:
    findings = api.lint_workload(ws, args.table)
    emit(args, findings, lint_text)
    return 0


def lint_text(findings: list[dict[str, Any]]) -> str:
    """One block per finding: the query, the predicate, why it cannot prune, the rewrite."""
    if not findings:
        return "every filtering query has a predicate zonemaps can prune with"
    merged = sum(1 for f in findings if f["kind"] == "widened-lookup")  # these do prune, less
    rest = len(findings) - merged
    head = [f"{rest} predicate(s) cannot prune"] if rest else []
    if merged:
        head.append(f"{merged} prune only through ranges merged from scattered dimension keys")
    lines = ["; ".join(head) + ":"]
    for f in findings:
        lines.append(f"{f['query_id']}  {f['kind']}  {f['predicate']}")
        lines.append(f"    why: {f['reason']}")
        if f.get("rewrite"):
            lines.append(f"    rewrite: {f['rewrite']}")
    return "\n".join(lines)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("workload", help="import query logs into scan fragments; show them")
    sub = parser.add_subparsers(dest="workload_command", metavar="ACTION")
    sub.required = True

    imp = sub.add_parser("import", help="import a .sql or .jsonl query log for TABLE")
    imp.add_argument("table", metavar="TABLE")
    imp.add_argument("file", metavar="FILE", help=".sql (statements separated by ';') or .jsonl "
                     "({\"ts\", \"sql\", optional \"id\", \"duration_ms\", \"bytes_scanned\", \"user\"})")
    imp.add_argument("--dialect", help="SQL dialect for sqlglot (spark, snowflake, duckdb, ...)")
    imp.add_argument("--strict", action="store_true",
                     help="fail on the first bad statement instead of skipping and reporting it")
    again = imp.add_mutually_exclusive_group()
    again.add_argument("--replace", action="store_true",
                       help="replace the table's workload instead of adding to it")
    again.add_argument("--append", action="store_true",
                       help="add the log even if its queries were imported before")
    add_json_flag(imp)
    imp.set_defaults(func=_do_import)

    show = sub.add_parser("show", help="list the scan fragments of TABLE")
    show.add_argument("table", metavar="TABLE")
    add_json_flag(show)
    show.set_defaults(func=_do_show)

    lint = sub.add_parser("lint", help="queries whose predicates cannot prune, and the rewrite "
                                       "that would let them")
    lint.add_argument("table", metavar="TABLE")
    add_json_flag(lint)
    lint.set_defaults(func=_do_lint)

    clear = sub.add_parser("clear", help="forget the imported workload of TABLE")
    clear.add_argument("table", metavar="TABLE")
    add_identity_args(clear, who="admin")
    clear.set_defaults(func=_do_clear)
