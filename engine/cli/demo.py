"""``layout-advisor demo``: build the demo table and workload, then open the dashboard.

By default TPC-H SF 1 (6M rows, about 3,000 micro-partitions of 2,000 rows, ingested in
``o_orderdate`` order with WAIR's widened ship-date gap) is generated offline with
``tpchgen-cli`` and DuckDB, with the demo query log (hot ranges, a shift from
``l_shipdate`` to ``l_commitdate``, an independent ``l_suppkey`` filter) that makes WAIR's
hybrid layouts appear. ``--scale`` picks another size; ``--sample`` loads the small
committed sample instead (no generation; what the tests use). ``--large-files`` writes
lineitem as a few large files in row groups instead of micro-partitions (files of ~1M rows
in row groups of ~100k), so every pruning happens inside files, as on real tables.

``--tpcds [SF]`` builds a star schema instead: TPC-DS ``store_sales`` (in the generator's
ticket order, unclustered on the sale date) with ``date_dim`` and ``item``, generated
offline with ``tpcgen-cli``, and a log of star queries that filter the dimensions; the
import turns those filters into ranges of ``store_sales``'s keys by looking them up in the
registered dimensions (:mod:`engine.workload.lookup`).

Idempotent: an existing ``lineitem`` table and its imported workload are kept, so running
the demo twice only starts the dashboard again.
"""

from __future__ import annotations

import argparse
import os
import time
import sys
from pathlib import Path

from engine import api
from engine.cli.args import positive, positive_int
from engine.cli.ui import run_ui
from engine.core.config import Settings
from engine.core.errors import DataFileError, InvalidParameterError

DEMO_TABLE = "lineitem"
SAMPLE_TABLE_FILE = "lineitem.parquet"
SAMPLE_QUERY_FILE = "lineitem_queries.jsonl"


def sample_dir() -> Path:
    """The ``sample_data`` folder: next to the package (checkout, Docker) or in the CWD."""
    candidates = [Path(__file__).resolve().parents[2] / "sample_data", Path.cwd() / "sample_data"]
    for candidate in candidates:
        if (candidate / SAMPLE_TABLE_FILE).is_file():
            return candidate
    raise DataFileError("sample_data/lineitem.parquet not found; run the demo from the repository root")


def _say(message: str) -> None:
    print(f"demo: {message}", file=sys.stderr, flush=True)


DEMO_ADMIN = "dba"
DEMO_SECRET_ENV = "LAYOUT_ADVISOR_DEMO_SECRET"


def ensure_demo_admin(ws: "api.Workspace | Settings") -> None:
    """Give a workspace without an admin the demo admin ``dba``: its secret is
    ``LAYOUT_ADVISOR_DEMO_SECRET`` when set, else generated and printed once (only its
    Argon2id hash is stored)."""
    if api.has_admin(ws):
        return
    secret = os.environ.get(DEMO_SECRET_ENV) or ""
    generated = not secret
    if generated:
        secret = api.generate_secret()
    api.add_approver(ws, DEMO_ADMIN, secret, admin=True)
    if generated:
        _say(f"created admin {DEMO_ADMIN!r} with the generated secret {secret} (shown only "
             "this once; change it with `layout-advisor approvers passwd dba --as dba`)")
    else:
        _say(f"created admin {DEMO_ADMIN!r} with the secret from {DEMO_SECRET_ENV}")


def build_demo(ws: "api.Workspace | Settings", scale: float | None = None, table_format: str = "iceberg",
               queries: int | None = None, writer: str = "arrow", large_files: bool = False) -> None:
    """Create table ``lineitem`` and import its workload unless they already exist.

    ``scale``: generate TPC-H at this scale factor with the demo query log (``queries``
    of them); None: the committed sample and its log. ``table_format`` "iceberg" (the
    default): ``default.lineitem`` of the workspace's SQLite Iceberg catalog, readable by
    any Iceberg engine; "native": the workspace's own snapshots (its folder keeps
    superseded files until ``table gc``: list the live ones with ``layout-advisor table
    files lineitem``). ``writer`` "arrow" (default) writes the micro-partitions from Arrow
    in the file's row order without Spark; "spark" runs the general Spark ingest.

    ``large_files``: write ``lineitem`` as a few large files in several row groups each
    (files of ~1M rows in row groups of ~100k, :func:`engine.api.large_file_shape`; the
    sample gives 4 files of 50,000 rows in row groups of 5,000), the shape of real tables
    whose files hold 64-512 MB, where every pruning happens inside files; estimates, plans
    and the dashboard count the row groups engines skip (``prune_row_groups``, on by
    default; the demo says so when the workspace turns it off)."""
    ws = api.as_workspace(ws)  # scripts and tests may pass Settings
    started = time.monotonic()

    def say(message: str) -> None:
        _say(f"[{time.monotonic() - started:5.0f} s] {message}")

    ensure_demo_admin(ws)
    existing = {t["name"] for t in api.list_tables(ws)}
    if scale:
        if DEMO_TABLE not in existing and writer == "spark":
            api.start_spark_early(ws)  # the JVM starts while the data is generated
        say(f"TPC-H scale {scale:g}: data and demo query log (generated once, offline)")
        table_file, query_file = api.make_demo_data(ws, scale, queries=queries, progress=say)
    else:
        table_file, query_file = sample_dir() / SAMPLE_TABLE_FILE, sample_dir() / SAMPLE_QUERY_FILE
    if DEMO_TABLE in existing:
        say(f"table {DEMO_TABLE} already exists in {ws.settings.home}; keeping it")
    elif large_files:
        rows, group_rows = api.large_file_shape(api.source_rows(table_file))
        say(f"building {table_format} table {DEMO_TABLE} from {table_file} as large files: "
            f"{rows:,} rows per file in row groups of {group_rows:,} rows (ingestion order = "
            "o_orderdate, written by arrow)")
        api.create_demo_table(ws, DEMO_TABLE, table_file, rows, table_format=table_format,
                              writer=writer, progress=say, row_group_rows=group_rows)
    else:
        say(f"building {table_format} table {DEMO_TABLE} from {table_file} "
            f"({api.DEMO_TARGET_ROWS} rows per micro-partition, ingestion order = o_orderdate, "
            f"written by {writer})")
        api.create_demo_table(ws, DEMO_TABLE, table_file, api.DEMO_TARGET_ROWS,
                              table_format=table_format, writer=writer, progress=say)
    if large_files and not ws.settings.prune_row_groups:
        say("prune_row_groups is off in this workspace: estimates stay at file level, where a "
            "within-file reordering saves nothing")
    if api.workload_fragments(ws, DEMO_TABLE):
        say("workload already imported; keeping it")
    else:
        report = api.import_workload(ws, DEMO_TABLE, str(query_file))
        say(f"imported {report['fragments']} scan fragments from {query_file}")
    took = api.warm_summaries(ws, DEMO_TABLE)  # the dashboard's first visit only loads them
    say(f"dashboard summaries stored ({took['columns_s'] + took['pruning_s']:.1f} s)")
    say("demo ready")


TPCDS_FACT = "store_sales"
#: the TPC-DS scale of ``--tpcds`` without a value: 288k store_sales rows, ~145 partitions
TPCDS_SCALE = 0.1
#: rows per file of a dimension table (one file: a dimension is read whole by a lookup)
DIMENSION_ROWS = 10_000_000


def build_tpcds_demo(ws: "api.Workspace | Settings", scale: float = TPCDS_SCALE,
                     queries: int | None = None, table_format: str = "iceberg") -> dict | None:
    """Create ``store_sales`` (micro-partitions of ``DEMO_TARGET_ROWS`` rows in the
    generator's order), ``date_dim`` and ``item`` unless they exist, and import the star
    query log into ``store_sales`` with dimension lookups; returns the import report (or
    None when the workload was already there)."""
    ws = api.as_workspace(ws)
    started = time.monotonic()

    def say(message: str) -> None:
        _say(f"[{time.monotonic() - started:5.0f} s] {message}")

    ensure_demo_admin(ws)
    existing = {t["name"] for t in api.list_tables(ws)}
    files, log = api.make_tpcds_demo_data(ws, scale, queries, progress=say)
    for name in api.TPCDS_TABLES:
        if name in existing:
            say(f"table {name} already exists in {ws.settings.home}; keeping it")
            continue
        rows = api.DEMO_TARGET_ROWS if name == TPCDS_FACT else DIMENSION_ROWS
        say(f"building {table_format} table {name} from {files[name]}"
            + (f" ({rows} rows per micro-partition, the generator's order)"
               if name == TPCDS_FACT else ""))
        api.create_demo_table(ws, name, files[name], rows, table_format=table_format,
                              writer="arrow", progress=say)
    report = None
    if api.workload_fragments(ws, TPCDS_FACT):
        say("workload already imported; keeping it")
    else:
        report = api.import_workload(ws, TPCDS_FACT, str(log))
        rows = api.show_workload(ws, TPCDS_FACT)
        looked = sum(1 for r in rows if any(s["kind"] == "lookup" for s in r["sources"]))
        say(f"imported {report['fragments']} scan fragments from {log}; {looked} got their "
            "store_sales ranges from date_dim / item lookups")
    took = api.warm_summaries(ws, TPCDS_FACT)
    say(f"dashboard summaries stored ({took['columns_s'] + took['pruning_s']:.1f} s)")
    say("demo ready")
    return report


def _run(args: argparse.Namespace, ws: "api.Workspace") -> int:
    if args.large_files and (args.tpcds is not None or args.writer == "spark"):
        raise InvalidParameterError("--large-files builds lineitem with the arrow writer: drop "
                                    + ("--tpcds" if args.tpcds is not None else "--writer spark"))
    if args.tpcds is not None:
        build_tpcds_demo(ws, args.tpcds, args.queries, args.format)
        table = TPCDS_FACT
    else:
        build_demo(ws, None if args.sample else args.scale, args.format, args.queries, args.writer,
                   args.large_files)
        table = DEMO_TABLE
    if args.no_ui:
        _say("done (--no-ui): start the dashboard with `layout-advisor ui`")
        return 0
    port = args.port if args.port is not None else ws.settings.ui_port
    return run_ui(ws.settings, port, table=table, address=args.address)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="build the demo table and workload, then start the dashboard",
        description="Build table 'lineitem' (TPC-H, ingested in o_orderdate order) and its "
                    "demo query log in the workspace, then start the dashboard.")
    parser.add_argument("--scale", type=positive, default=api.DEMO_SCALE,
                        help=f"TPC-H scale factor to generate (default {api.DEMO_SCALE:g}: 6M rows, "
                             "about 3,000 micro-partitions)")
    parser.add_argument("--sample", action="store_true",
                        help="load the small committed sample (200k rows, 100 partitions) instead")
    parser.add_argument("--tpcds", type=positive, nargs="?", const=TPCDS_SCALE, default=None,
                        metavar="SF",
                        help="a star schema instead: TPC-DS store_sales, date_dim and item at "
                             f"scale SF (default {TPCDS_SCALE:g}; tpcgen-cli) and star queries "
                             "whose date and item filters reach store_sales through lookups")
    parser.add_argument("--queries", type=positive_int, default=None,
                        help="size of the generated demo query log, over four weeks (default "
                             f"{api.DEMO_LOG_QUERIES:,}: {api.DEMO_QUERIES_PER_DAY:,} a day, mostly "
                             "dashboard panels repeating their statements)")
    parser.add_argument("--format", choices=["iceberg", "native"], default="iceberg",
                        help="table format of lineitem: an Iceberg table in the workspace's "
                             "SQLite catalog (default) or the native snapshot format")
    parser.add_argument("--writer", choices=list(api.DEMO_WRITERS), default="arrow",
                        help="how the table's files are written: from Arrow in the generated "
                             "file's row order, no Spark (default), or by the general Spark ingest")
    parser.add_argument("--large-files", action="store_true",
                        help="write lineitem as a few large files in several row groups each, "
                             "like real tables of 64-512 MB files: the rows split evenly into "
                             "files of about 1,000,000 rows (at least 4 files: --sample gives "
                             "4 of about 50,000), each in 10 row groups")
    parser.add_argument("--no-ui", action="store_true", help="build only; do not start the dashboard")
    parser.add_argument("--port", type=int, default=None, help="dashboard port (default 8501)")
    parser.add_argument("--address", default=None, help="address the dashboard binds to")
    parser.set_defaults(func=_run)
