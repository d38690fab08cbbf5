"""``layout-advisor table ...``: create, register, adopt, list, show, files, snapshots,
rollback, gc, drop."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Mapping

from engine import api
from engine.cli.args import positive, positive_int
from engine.cli.auth import add_identity_args, signed_in
from engine.cli.output import add_json_flag, aligned, emit
from engine.core.errors import InvalidParameterError
from engine.core.fmt import human_bytes


def _progress(message: str) -> None:
    print(f"[table] {message}", file=sys.stderr, flush=True)


def _snapshot_summary(snap: Any) -> dict:
    return {"table": snap.table, "id": snap.id, "parent": snap.parent, "created_at": snap.created_at,
            "operation": snap.operation, "partition_count": snap.partition_count,
            "rows": snap.total_rows, "bytes": snap.total_bytes}


def _snapshot_text(d: Mapping[str, Any]) -> str:
    return (f"table {d['table']}: snapshot {d['id']} ({d['operation']}), {d['partition_count']} "
            f"micro-partitions, {d['rows']:,} rows, {human_bytes(d['bytes'])}")


def _list_text(rows: list[Mapping[str, Any]]) -> str:
    if not rows:
        return "no tables (create one with `layout-advisor table create NAME --from PATH`)"
    return aligned(["name", "kind", "format", "snapshot", "partitions", "rows", "size", "location"],
                   [[r["name"], "managed" if r["managed"] else "registered", r.get("format", "native"),
                     r["snapshot"], r["partitions"], f"{r['rows']:,}", human_bytes(r["bytes"]),
                     r["location"]] for r in rows],
                   right=(3, 4, 5, 6))


def _short(path: str, root: str) -> str:
    return os.path.relpath(path, root) if path.startswith(root.rstrip("/") + "/") else path


def _fmt(v: Any) -> str:
    if v is None:
        return "?"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _show_text(d: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    parts = d["partitions"]
    root = info["location"]
    lines = [f"table {d['name']}  snapshot {d['snapshot']}  {len(parts)} micro-partitions  "
             f"{info['rows']:,} rows  {human_bytes(info['bytes'])}",
             f"location {root} ({'managed' if info['managed'] else 'registered'}, "
             f"format {info.get('format', 'native')}"
             + (f", {info['identifier']} in catalog {info.get('catalog') or 'workspace'}"
                if info.get("identifier") else "") + ")"]
    if info.get("columns_without_stats"):
        lines.append("no statistics in the format's metadata for: "
                     + ", ".join(info["columns_without_stats"])
                     + ("; read from the Parquet footers" if info.get("columns_from_footers")
                        else ""))
    mor = info.get("merge_on_read") or {}
    if mor:
        path, why = next(iter(mor.items()))
        lines.append(f"merge-on-read deletes on {len(mor)} file(s), never rewritten: e.g. "
                     f"{path} {why}")
    misfits = info.get("spec_misfits") or {}
    if misfits:
        path, why = next(iter(misfits.items()))
        lines.append(f"{len(misfits)} file(s) of an older partition spec left out of plans: "
                     f"e.g. {why}")
    lines += ["", "columns:"]
    col_rows = []
    for c in info["columns"]:
        name = c["name"]
        stats = [p["columns"].get(name, {}) for p in parts]
        unknown = sum(1 for s in stats if s.get("min") is None)
        nulls = [s.get("nulls") for s in stats]
        lo = [s["min"] for s in stats if s.get("min") is not None]
        hi = [s["max"] for s in stats if s.get("max") is not None]
        col_rows.append([name, c["type"], _fmt(min(lo, default=None)), _fmt(max(hi, default=None)),
                         "?" if any(n is None for n in nulls) else sum(nulls), unknown])
    lines.append(aligned(["column", "type", "min", "max", "nulls", "unknown stats"], col_rows, right=(4, 5)))
    lines += ["", "micro-partitions:"]
    cols = [c["name"] for c in info["columns"]][:3]
    rows = []
    for i, p in enumerate(parts):
        rows.append([i, _short(p["path"], root), p["rows"], human_bytes(p["bytes"])]
                    + [f"{_fmt(p['columns'][c]['min'])} .. {_fmt(p['columns'][c]['max'])}"
                       for c in cols if c in p["columns"]])
    lines.append(aligned(["#", "path", "rows", "size"] + [f"{c} min..max" for c in cols], rows,
                         right=(0, 2, 3)))
    return "\n".join(lines)


def _snapshots_text(rows: list[Mapping[str, Any]]) -> str:
    return aligned(["id", "parent", "created_at", "operation", "partitions", "by", "plan"],
                   [[r["id"], r["parent"], r["created_at"], r["operation"],
                     _fmt(r.get("partition_count")), r.get("actor") or "",
                     (r.get("summary") or {}).get("la.plan-id", "")]
                    for r in rows], right=(0, 1, 4))


def _gc_text(d: Mapping[str, Any]) -> str:
    verb = "would delete" if d["dry_run"] else "deleted"
    head = f"table {d['table']}: {verb} {len(d['files'])} file(s) ({human_bytes(d['bytes'])}) " \
           f"not referenced by snapshots retained for {d['older_than']}"
    tail = ["(nothing deleted: add --yes --as ADMIN to delete them)"] if d["dry_run"] else []
    return "\n".join([head] + [f"  {f}" for f in d["files"]] + tail)


# ---------------------------------------------------------------------- commands
def _create(args: argparse.Namespace, ws: "api.Workspace") -> int:
    snap = api.create_table(ws, args.name, args.source, order_by=args.order_by,
                            target_rows=args.target_rows, target_mb=args.target_mb,
                            progress=_progress, format=args.format)
    emit(args, _snapshot_summary(snap), _snapshot_text)
    return 0


def _register(args: argparse.Namespace, ws: "api.Workspace") -> int:
    given = [flag for flag, value in (("PATH", args.path), ("--iceberg", args.iceberg),
                                      ("--delta", args.delta)) if value]
    if len(given) != 1:
        raise InvalidParameterError(
            "table register: give exactly one of PATH (a Parquet dataset), --iceberg "
            f"NAMESPACE.TABLE or --delta PATH (got {', '.join(given) or 'none'})")
    if args.catalog and not args.iceberg:
        raise InvalidParameterError("table register: --catalog goes with --iceberg")
    if args.iceberg:
        snap = api.register_iceberg(ws, args.name, args.iceberg, args.catalog)
    elif args.delta:
        snap = api.register_delta(ws, args.name, args.delta)
    else:
        snap = api.register_table(ws, args.name, args.path, progress=_progress)
    emit(args, _snapshot_summary(snap), _snapshot_text)
    return 0


def _adopt(args: argparse.Namespace, ws: "api.Workspace") -> int:
    snap = api.adopt_iceberg(ws, args.name, args.path)
    emit(args, _snapshot_summary(snap),
         lambda d: _snapshot_text(d) + f" - now iceberg table default.{args.name}, no file copied")
    return 0


def _files(args: argparse.Namespace, ws: "api.Workspace") -> int:
    emit(args, api.table_files(ws, args.name, args.snapshot), lambda d: "\n".join(d))
    return 0


def _list(args: argparse.Namespace, ws: "api.Workspace") -> int:
    emit(args, api.list_tables(ws), _list_text)
    return 0


def _show(args: argparse.Namespace, ws: "api.Workspace") -> int:
    data = api.show_table(ws, args.name, args.snapshot)
    if args.json:
        emit(args, data)
    else:
        info = api.table_info(ws, args.name).to_json()
        if args.snapshot:
            snap = api.load_snapshot(ws, args.name, args.snapshot)
            info.update(rows=snap.total_rows, bytes=snap.total_bytes,
                        columns=[{"name": n, "type": t} for n, t in snap.schema.columns])
        emit(args, data, lambda d: _show_text(d, info))
    return 0


def _snapshots(args: argparse.Namespace, ws: "api.Workspace") -> int:
    emit(args, api.table_snapshots(ws, args.name), _snapshots_text)
    return 0


def _rollback(args: argparse.Namespace, ws: "api.Workspace") -> int:
    api.load_snapshot(ws, args.name, args.to)  # a wrong target before the secret prompt
    with signed_in(args, ws) as identity:  # WAIR's state follows the table back
        outcome = api.rollback_and_reset(ws, args.name, args.to, actor=identity)
    snap = api.load_snapshot(ws, args.name, outcome["snapshot"])
    reset = " - WAIR's learned state was reset" if outcome["state_reset"] else ""
    emit(args, {**_snapshot_summary(snap), "state_reset": outcome["state_reset"]},
         lambda d: _snapshot_text(d) + f" - now equal to snapshot {args.to}{reset}")
    return 0


def _gc(args: argparse.Namespace, ws: "api.Workspace") -> int:
    """A dry run unless --yes; deleting needs an admin's --as (docs/security.md)."""
    try:
        older = api.parse_duration(args.older_than)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--older-than: {exc}") from None
    dry_run = not args.yes
    if args.yes and not args.actor:
        raise InvalidParameterError("--yes deletes files: add --as ADMIN (an admin's name; "
                                    "the secret is asked for)")
    if dry_run:
        files = api.gc_table(ws, args.name, older, dry_run=True,
                             force_retention=args.force_retention)
    else:
        api.gc_table(ws, args.name, older, dry_run=True,  # refuse before the prompt
                     force_retention=args.force_retention)
        with signed_in(args, ws) as identity:
            files = api.gc_table(ws, args.name, older, dry_run=False, actor=identity,
                                 force_retention=args.force_retention)
    total = api.files_bytes(files) if dry_run else None
    emit(args, {"table": args.name, "dry_run": dry_run, "older_than": args.older_than,
                "files": files, "bytes": total}, _gc_text)
    return 0


def _drop(args: argparse.Namespace, ws: "api.Workspace") -> int:
    api.table_info(ws, args.name)  # an unknown table before the secret prompt
    with signed_in(args, ws) as identity:
        api.drop_table(ws, args.name, actor=identity)
    emit(args, {"table": args.name, "dropped": True}, f"table {args.name} dropped")
    return 0


def register(subparsers: Any) -> None:
    table = subparsers.add_parser("table", help="create, register and inspect tables")
    sub = table.add_subparsers(dest="table_command", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("create", help="ingest CSV or Parquet into equal-size micro-partitions (Spark)")
    p.add_argument("name")
    p.add_argument("--from", dest="source", required=True, metavar="PATH",
                   help="CSV (with header) or Parquet: a file, folder or glob")
    p.add_argument("--order-by", metavar="COL", help="sort rows by COL (default: ingestion order)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--target-rows", type=positive_int, metavar="N", help="rows per micro-partition")
    size.add_argument("--target-mb", type=positive, metavar="M", help="MiB per micro-partition")
    p.add_argument("--format", choices=["native", "iceberg"], default="native",
                   help="native snapshots in the workspace, or an Iceberg table default.NAME "
                        "of the workspace's catalog (default native)")
    add_json_flag(p)
    p.set_defaults(func=_create)

    p = sub.add_parser("register", help="register a Parquet dataset (read-only), an Iceberg "
                                        "or a Delta table (rewritten in place)")
    p.add_argument("name")
    p.add_argument("path", nargs="?", help="a Parquet file, folder (nested folders too) or glob")
    p.add_argument("--iceberg", metavar="NAMESPACE.TABLE", help="an Iceberg table of a catalog")
    p.add_argument("--catalog", metavar="C",
                   help="pyiceberg catalog name (~/.pyiceberg.yaml or PYICEBERG_CATALOG__C__*); "
                        "default: the workspace's SQLite catalog")
    p.add_argument("--delta", metavar="PATH", help="a Delta table's folder or URI")
    add_json_flag(p)
    p.set_defaults(func=_register)

    p = sub.add_parser("adopt", help="turn a Parquet folder into an Iceberg table without copying")
    p.add_argument("name")
    p.add_argument("path", help="the Parquet folder (or glob)")
    p.add_argument("--format", choices=["iceberg"], default="iceberg",
                   help="the open format to adopt it into (iceberg)")
    add_json_flag(p)
    p.set_defaults(func=_adopt)

    p = sub.add_parser("files", help="the live data files of a table (what other readers must read)")
    p.add_argument("name")
    p.add_argument("--snapshot", help="this snapshot instead of the current one")
    add_json_flag(p)
    p.set_defaults(func=_files)

    p = sub.add_parser("list", help="list tables")
    add_json_flag(p)
    p.set_defaults(func=_list)

    p = sub.add_parser("show", help="partitions and zonemaps of a table")
    p.add_argument("name")
    p.add_argument("--snapshot", help="show this snapshot instead of the current one")
    add_json_flag(p)
    p.set_defaults(func=_show)

    p = sub.add_parser("snapshots", help="the table's snapshot history")
    p.add_argument("name")
    add_json_flag(p)
    p.set_defaults(func=_snapshots)

    p = sub.add_parser("rollback", help="publish a new snapshot equal to an older one")
    p.add_argument("name")
    p.add_argument("--to", required=True, metavar="SNAPSHOT", help="snapshot id to restore")
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_rollback)

    p = sub.add_parser("gc", help="delete data files no retained snapshot references")
    p.add_argument("name")
    p.add_argument("--older-than", default="7d", metavar="DURATION",
                   help="keep snapshots current within this long ago: 7d, 12h, 30m (default 7d)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the files, delete nothing (the default without --yes)")
    p.add_argument("--yes", action="store_true", help="delete them (needs --as ADMIN)")
    p.add_argument("--force-retention", dest="force_retention", action="store_true",
                   help="allow --older-than below the 7-day minimum retention")
    add_identity_args(p, required=False, who="admin (with --yes)")
    add_json_flag(p)
    p.set_defaults(func=_gc)

    p = sub.add_parser("drop", help="forget a table (a registered table's files stay)")
    p.add_argument("name")
    add_identity_args(p, who="admin")
    add_json_flag(p)
    p.set_defaults(func=_drop)
