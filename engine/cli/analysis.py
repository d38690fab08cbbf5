"""``layout-advisor analyze NAME`` (clustering per column) and ``layout-advisor pruning TABLE``."""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence

from engine import api
from engine.cli.args import positive_int
from engine.cli.output import add_json_flag, emit, emit_stream
from engine.core.fmt import JEDEC_UNITS, human_bytes

LIGHTS = {"green": "GREEN", "amber": "AMBER", "red": "RED", "grey": "GREY"}


def _bytes(n: float) -> str:
    return human_bytes(n, JEDEC_UNITS)


def analyze_text(rows: Sequence["api.ColumnClustering"]) -> str:
    if not rows:
        return "no orderable column to analyze"
    width = max(len(r.column) for r in rows)
    lines = []
    for r in rows:
        lines.append(
            f"{r.column.ljust(width)}  {LIGHTS.get(r.verdict, r.verdict):5s}  "
            f"depth {r.average_depth:.1f}  overlaps {r.average_overlaps:.1f}  "
            f"partitions {r.total_partition_count}"
            + (f" (+{r.unknown_partition_count} without stats)" if r.unknown_partition_count else "")
            + f"  constant {r.total_constant_partition_count}  -- {r.reason}")
        ep = r.ep
        if ep:
            deep = ep.get("deepest_subrange")
            where = (f"; deepest sub-range {deep['start']} .. {deep['end']} (total average depth "
                     f"{deep['total_average_depth']:g}, {len(deep['ep_files'])} EP files)"
                     if deep else "")
            lines.append(f"{' ' * width}  EP files of {ep['ep_file_partitions']}: "
                         f"{ep['ep_file_count']} files, average local depth "
                         f"{ep['average_local_depth']:.2f}, EP overlap {ep['average_ep_overlap']:.1f}, "
                         f"EP depth {ep['average_ep_depth']:.1f}{where}")
    return "\n".join(lines)


def pruning_text(rows: Sequence[Mapping[str, Any]], table: str, unit: str | None = None) -> str:
    """Per query: files scanned of the table's, pruned, covered, boundary, bytes; then the
    totals and ``unit`` (:func:`engine.api.pruning_unit`'s label)."""
    if not rows:
        return (f"no workload for {table} (import one with "
                f"`layout-advisor workload import {table} FILE`)")
    qw = max(8, max(len(str(r["query_id"])) for r in rows))
    kind = "exact" if rows[0].get("exact") else "estimated"
    lines = [f"{'query'.ljust(qw)}  scanned/total  pruned  covered  boundary  bytes scanned  "
             f"utilization ({kind})"]
    for r in rows:
        lines.append(
            f"{str(r['query_id']).ljust(qw)}  {r['scanned']:>7}/{r['partitions']:<5}  "
            f"{r['pruning_rate']:6.1%}  {r['fully_covered']:7}  {r['boundary']:8}  "
            f"{_bytes(r['bytes_scanned']):>13}  {r['average_utilization']:.2f}")
    scanned = sum(r["bytes_scanned"] for r in rows)
    wasted = sum(r["wasted_bytes"] for r in rows)
    boundary = sum(r["boundary"] for r in rows)
    lines.append(f"{len(rows)} queries: {_bytes(scanned)} scanned, {_bytes(wasted)} of it "
                 f"not needed ({wasted / scanned:.0%})" if scanned else f"{len(rows)} queries")
    lines[-1] += f"; {boundary} boundary partition scans"
    if "row_groups" in rows[0]:
        read = sum(r["row_groups_read"] for r in rows)
        total = sum(r["row_groups"] for r in rows)
        lines[-1] += (f"; row-group level: {read} of {total} row groups read "
                      f"({1 - read / total:.0%} skipped)" if total else "; row-group level")
    if unit:
        lines.append(unit)
    return "\n".join(lines)


def _analyze(args: argparse.Namespace, ws: "api.Workspace") -> int:
    rows = api.analyze(ws, args.name, columns=args.columns, snapshot_id=args.snapshot,
                       ep_file_partitions=args.ep_files, where=args.where)
    emit(args, [r.to_json() for r in rows] if args.json else rows, analyze_text)
    return 0


def _pruning(args: argparse.Namespace, ws: "api.Workspace") -> int:
    rows = api.iter_pruning(ws, args.table, exact=args.exact, snapshot_id=args.snapshot,
                            per_partition=args.per_partition, row_groups=args.row_groups)
    unit = None if args.json else api.pruning_unit(ws, args.table, args.snapshot,
                                                   row_groups=args.row_groups).label()
    emit_stream(args, rows, lambda r: pruning_text(r, args.table, unit))
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "analyze", help="clustering metrics per column (overlap, depth, histogram, profile)",
        description="Snowflake-style clustering metrics of a table's columns from its "
                    "zonemaps, with a traffic-light verdict per column.")
    p.add_argument("name", help="table name")
    p.add_argument("--columns", help="comma-separated columns (default: all orderable)")
    p.add_argument("--ep-files", dest="ep_files", type=positive_int, metavar="N",
                   help="also the patent's EP-file metrics, N partitions per EP file")
    p.add_argument("--snapshot", help="snapshot id (default: current)")
    p.add_argument("--where", metavar="PREDICATE",
                   help="only the partitions a SQL predicate may touch, e.g. "
                        "\"l_shipdate between date '1995-01-01' and date '1995-03-31'\" "
                        "(like Snowflake's SYSTEM$CLUSTERING_DEPTH with a predicate)")
    add_json_flag(p)
    p.set_defaults(func=_analyze)

    q = subparsers.add_parser(
        "pruning", help="per query: partitions scanned, pruned, fully covered, boundary",
        description="Pruning analysis of the table's stored workload: which partitions each "
                    "query scans, prunes, fully covers; bytes scanned and utilization.")
    q.add_argument("table", help="table name")
    q.add_argument("--exact", action="store_true",
                   help="true matching-row counts in one Spark pass (default: estimated)")
    q.add_argument("--snapshot", help="snapshot id (default: current)")
    q.add_argument("--per-partition", dest="per_partition", action="store_true",
                   help="with --json: per-partition scanned/covered/utilization arrays "
                        "(with --row-groups also the bytes each file is charged)")
    level = q.add_mutually_exclusive_group()
    level.add_argument("--row-groups", dest="row_groups", action="store_true", default=None,
                       help="charge files of several row groups (e.g. PAW's STR row groups) "
                            "only the row groups each query meets (default: the "
                            "prune_row_groups setting, off)")
    level.add_argument("--files", dest="row_groups", action="store_false",
                       help="file-level answer: a file is read whole once its min/max may match")
    add_json_flag(q)
    q.set_defaults(func=_pruning)
