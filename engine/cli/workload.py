"""``layout-advisor workload ...``: import a query log, show the scan fragments, clear them."""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence

from engine.cli import add_json_flag, emit

MAX_SKIPPED_SHOWN = 10


def _import_text(r: Mapping[str, Any]) -> str:
    lines = [f"imported {r['file']} into {r['table']}: {r['statements']} statements, "
             f"{r['fragments']} fragments, {len(r['skipped'])} skipped"
             + (f", {r['ignored']} not reading {r['table']}" if r.get("ignored") else "")]
    for item in r["skipped"][:MAX_SKIPPED_SHOWN]:
        lines.append(f"  skipped line {item['line']}: {item['reason']}")
    if len(r["skipped"]) > MAX_SKIPPED_SHOWN:
        lines.append(f"  ... and {len(r['skipped']) - MAX_SKIPPED_SHOWN} more (--json lists all)")
    return "\n".join(lines)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [list(headers)] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers) - 1)]
    return "\n".join("  ".join([c.ljust(w) for c, w in zip(r, widths)] + [r[-1]]).rstrip()
                     for r in cells)


def _show_text(settings: Any, table: str, rows: list[dict]) -> str:
    from engine.workload.boxes import format_predicate
    from engine.workload.model import Range

    if not rows:
        return (f"no workload for {table} (import one with "
                f"`layout-advisor workload import {table} FILE`)")
    out = []
    for r in rows:
        boxes = [{c: Range(b["min"], b["max"], b["min_inclusive"], b["max_inclusive"])
                  for c, b in box.items()} for box in r["boxes"]]
        out.append([r["query_id"], r["ts"] or "-", str(len(r["columns"])),
                    format_predicate(boxes)])
    return f"{len(rows)} scan fragments of {table}\n" + _table(
        ["query_id", "ts", "cols", "predicate"], out)


def _do_import(args: argparse.Namespace, settings: Any) -> int:
    from engine.api.workload import import_workload

    report = import_workload(settings, args.table, args.file, dialect=args.dialect,
                             strict=args.strict, replace=args.replace)
    emit(args, report, _import_text)
    return 0


def _do_show(args: argparse.Namespace, settings: Any) -> int:
    from engine.api.workload import show_workload

    rows = show_workload(settings, args.table)
    emit(args, rows, lambda data: _show_text(settings, args.table, data))
    return 0


def _do_clear(args: argparse.Namespace, settings: Any) -> int:
    from engine.api.workload import clear_workload

    clear_workload(settings, args.table)
    print(f"cleared the workload of {args.table}")
    return 0


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
    imp.add_argument("--replace", action="store_true",
                     help="replace the table's workload instead of appending to it")
    add_json_flag(imp)
    imp.set_defaults(func=_do_import)

    show = sub.add_parser("show", help="list the scan fragments of TABLE")
    show.add_argument("table", metavar="TABLE")
    add_json_flag(show)
    show.set_defaults(func=_do_show)

    clear = sub.add_parser("clear", help="forget the imported workload of TABLE")
    clear.add_argument("table", metavar="TABLE")
    clear.set_defaults(func=_do_clear)
