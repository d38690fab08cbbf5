"""The first dashboard visit at warehouse scale: every page at 1,000,000
partitions, cold (a fresh app: caches empty) and warm.

The table is built at the metadata level (no data file: the pages read metadata only):
a native table created with one partition through the store, then its manifest replaced
by a generated one of N partitions with lineitem-like zonemaps (ingestion by order key,
ship/commit/receipt dates trailing the order date, quantity and price unclustered), as
``bench/planning/bench_plan_create.py`` does; its workload is Q distinct date-range queries imported
through the workload API. The timers are ``bench/ui/bench_ui.py``'s: Streamlit's AppTest
(server side: the page scripts, the engine calls and the charts' specs, no browser) and,
with ``--browser``, headless Chromium against ``layout-advisor ui`` (navigation to idle).
Under AppTest each page also reports ``elements_kb``, the protobuf bytes of its elements
(what the websocket carries for them; the same on a busy machine), and its largest ones.

    .venv/bin/python bench/ui/bench_ui_scale.py --partitions 1000000 --queries 10000
    .venv/bin/python bench/ui/bench_ui_scale.py --partitions 1000000 --browser --home /tmp/ws
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.ui import bench_ui  # noqa: E402  (the repository root is on sys.path first)
from engine import api  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.table import manifest  # noqa: E402
from engine.table.model import ColumnStats, Partition, TableSchema  # noqa: E402
from engine.table.store import TableStore  # noqa: E402

TABLE = "lineitem"
SCHEMA = TableSchema((("l_orderkey", "int"), ("l_quantity", "int"), ("l_extendedprice", "float"),
                      ("l_shipdate", "date"), ("l_commitdate", "date"), ("l_receiptdate", "date")))
START = dt.date(1992, 1, 1)
DAYS = 6 * 365
ROWS = 100_000
#: the thread AppTest runs a page script on (streamlit.runtime.scriptrunner.ScriptRunner)
SCRIPT_THREAD = "ScriptRunner.scriptThread"

if TYPE_CHECKING:
    import cProfile


def _bounds(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """(lo, hi) per schema column for n partitions in ingestion order."""
    o_lo = (np.arange(n) * DAYS // n).astype(np.int64)
    o_hi = ((np.arange(n) + 1) * DAYS // n).astype(np.int64)
    lag = rng.integers(100, 1000, n)
    day0 = np.datetime64(START, "D")

    def days(k: np.ndarray) -> pa.Array:
        return pa.array(day0 + k.astype("timedelta64[D]"))

    key = np.arange(n, dtype=np.int64) * ROWS
    return [(pa.array(key), pa.array(key + ROWS - 1)),
            (pa.array(np.ones(n, np.int64)), pa.array(np.full(n, 50, np.int64))),
            (pa.array(np.full(n, 900.0)), pa.array(np.full(n, 104_950.0))),
            (days(o_lo + 1), days(o_hi + lag)), (days(o_lo + 30), days(o_hi + 90)),
            (days(o_lo + 2), days(o_hi + lag + 30))]


def build(home: Path, n: int, queries: int, seed: int = 3) -> None:
    """The metadata-only table of n partitions and its workload of ``queries`` queries."""
    bench_ui.write_config(home, ROWS)
    settings = load_settings({"home": str(home)}, environ={})
    rng = np.random.default_rng(seed)
    one = Partition("/nonexistent/part-0.parquet", ROWS, 1_660_000,
                    {c: ColumnStats(None, None, 0, 1) for c in SCHEMA.names})
    snap = TableStore(settings).create(TABLE, schema=SCHEMA, partitions=[one], operation="register",
                                       managed=False, location="/nonexistent")
    info = TableStore(settings).info(TABLE)
    header = json.loads(Path(info.metadata_dir, f"snap-{int(snap.id):08d}.json").read_text())
    data: dict = {"path": pa.array([f"/nonexistent/part-{i:07d}.parquet" for i in range(n)]),
                  "rows": np.full(n, ROWS), "bytes": np.full(n, 1_660_000),
                  "created_seq": np.arange(n), "rg_file": pa.nulls(n, pa.string())}
    for i, (lo, hi) in enumerate(_bounds(n, rng)):
        data.update({f"c{i}_min": lo, f"c{i}_max": hi, f"c{i}_nulls": np.zeros(n, np.int64),
                     f"c{i}_cbytes": np.full(n, 1_660_000 // 6)})
    pq.write_table(pa.Table.from_pydict(data, schema=manifest.manifest_schema(SCHEMA)),
                   os.path.join(info.metadata_dir, header["manifest"]))
    log = bench_ui.write_query_log(home.parent / "queries.jsonl", TABLE, queries, rng, START, DAYS,
                                   durations=True)
    api.import_workload(settings, TABLE, str(log))


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def time_warm(home: Path) -> dict:
    """What a commit, a rollback or an import now adds: the stored summaries
    deleted, then :func:`engine.api.warm_summaries` of the current snapshot, wall and CPU,
    in this process (the snapshot's zonemaps are loaded first and timed apart)."""
    settings = load_settings({"home": str(home)}, environ={})
    shutil.rmtree(home / "cache" / "summaries", ignore_errors=True)
    w, c = time.perf_counter(), _cpu()
    api.load_snapshot(settings, TABLE).zonemaps()
    load = (time.perf_counter() - w, _cpu() - c)
    w, c = time.perf_counter(), _cpu()
    parts = api.warm_summaries(settings, TABLE)
    return {"step": "warm_summaries", "load_s": round(load[0], 2), "load_cpu_s": round(load[1], 2),
            "warm_s": round(time.perf_counter() - w, 2), "warm_cpu_s": round(_cpu() - c, 2),
            **parts, "load": round(os.getloadavg()[0], 1)}


def element_bytes(node) -> list[tuple[int, str, str]]:
    """(protobuf bytes, element type, key) of every element under an AppTest node: what
    the server sends the browser for it (the websocket carries these messages), measured
    without a browser and whatever the load."""
    children = getattr(node, "children", None)
    if children:
        return [row for child in (children.values() if isinstance(children, dict) else children)
                for row in element_bytes(child)]
    proto = getattr(node, "proto", None)
    if proto is None:
        return []
    return [(proto.ByteSize(), str(node.type), str(getattr(node, "key", None) or ""))]


@contextlib.contextmanager
def profiling_thread(prof: "cProfile.Profile", name: str = SCRIPT_THREAD) -> Iterator[None]:
    """Profile, with ``prof``, every thread called ``name`` that starts inside the block.

    AppTest runs the page script on a thread of its own (Streamlit's
    ``ScriptRunner.scriptThread``, a new one per ``run()``), and cProfile follows only the
    thread that enables it: enabled around ``at.run()`` on the main thread it saw the main
    thread waiting and almost nothing of the page. ``threading.setprofile`` installs a hook
    in each thread started meanwhile; in the script thread the hook hands over to ``prof``
    (other threads drop it, so one profile never records two threads at once)."""
    def start(frame, event, arg):  # the new thread's first event
        sys.setprofile(None)
        if threading.current_thread().name == name:
            prof.enable()

    threading.setprofile(start)
    try:
        yield
    finally:
        threading.setprofile(None)


def time_pages(home: Path, runs: int, profile: bool,
               pages: tuple[str, ...] = tuple(bench_ui.PAGES)) -> list[dict]:
    """``bench_ui.time_pages`` with CPU time beside wall time (the app runs in this
    process: on a loaded machine CPU time is the figure an idle one would approach), and
    with ``profile`` the top engine functions of each cold run."""
    import cProfile
    import pstats

    from streamlit.testing.v1 import AppTest  # streamlit is costly; only this step needs it

    os.environ["LAYOUT_ADVISOR_HOME"] = str(home)
    at = AppTest.from_file(bench_ui.APP, default_timeout=1800)
    at.session_state["table"] = TABLE
    out = []
    for page in pages:
        if page != "overview":
            at.switch_page(f"app_pages/{page}.py")
        prof = cProfile.Profile(time.process_time) if profile else None
        w, c = time.perf_counter(), _cpu()
        with profiling_thread(prof) if prof else contextlib.nullcontext():
            at.run()  # the first visit of the page (the app opens on Overview)
        cold, cold_cpu = time.perf_counter() - w, _cpu() - c
        warm, warm_cpu = [], []
        for _ in range(runs):
            w, c = time.perf_counter(), _cpu()
            at.run()
            warm.append(time.perf_counter() - w)
            warm_cpu.append(_cpu() - c)
        problems = [str(e.value)[:160] for e in [*at.exception, *at.error]]
        sizes = sorted(element_bytes(at.main), reverse=True)
        row = {"page": page, "cold_s": round(cold, 2), "cold_cpu_s": round(cold_cpu, 2),
               "warm_s": round(statistics.median(warm), 2), "warm_cpu_s": round(statistics.median(warm_cpu), 2),
               "elements_kb": round(sum(b for b, _, _ in sizes) / 1024),
               "largest": [f"{t} {k} {b / 1024:.0f} KB".replace("  ", " ") for b, t, k in sizes[:4]],
               "problems": "; ".join(problems), "load": round(os.getloadavg()[0], 1)}
        out.append(row)
        print(json.dumps(row), flush=True)
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(r"engine|app", 25)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=2, help="warm runs per page (median reported)")
    ap.add_argument("--home", help="build into (or reuse) this workspace instead of a temporary one")
    ap.add_argument("--browser", action="store_true", help="headless Chromium instead of AppTest")
    ap.add_argument("--drop-summaries", action="store_true",
                    help="delete the stored summaries before the pages (the first visit computes them)")
    ap.add_argument("--profile", action="store_true", help="print each cold page's top engine calls")
    ap.add_argument("--pages", default=",".join(bench_ui.PAGES),
                    help="comma-separated pages to time, in order (AppTest only; e.g. "
                         "partitions: the first visit then opens on that page)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-ui-scale-") as tmp:
        home = Path(args.home) if args.home else Path(tmp) / "home"
        if not (home / "tables" / TABLE).exists():
            t = time.perf_counter()
            build(home, args.partitions, args.queries)
            print(f"built {args.partitions:,} partitions, {args.queries:,} queries in "
                  f"{time.perf_counter() - t:.1f} s", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
        warm = time_warm(home)
        print(json.dumps(warm), flush=True)
        if args.drop_summaries:
            shutil.rmtree(home / "cache" / "summaries", ignore_errors=True)
        rows = (bench_ui.browser_times(home, TABLE, args.runs) if args.browser
                else time_pages(home, args.runs, args.profile,
                                tuple(p for p in args.pages.split(",") if p)))
        print(json.dumps({"partitions": args.partitions, "queries": args.queries,
                          "browser": args.browser, "load_average": round(os.getloadavg()[0], 1),
                          "pages": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
