"""Dashboard render time per page, warm cache (Streamlit AppTest, headless).

Two tables:

* ``demo``: the demo table (``sample_data/lineitem.parquet`` at target_rows 2000 with
  ``sample_data/lineitem_queries.jsonl``), built with Spark into a temporary workspace, or
  an existing workspace given with ``--demo-home``;
* ``synthetic``: a metadata-only table of ``--partitions`` micro-partitions (lineitem-like
  zonemaps: ingestion by order date, ship dates trailing) and ``--queries`` range queries,
  imported through the workload API. Pages only read metadata, so no data file is needed.

For each page: one cold run (the first visit after the app opened on Overview: it fills the
page's caches), then ``--runs`` warm runs; the median warm run is the figure (goal: < 2 s).
Writes ``bench/ui/results.csv``.

    .venv/bin/python bench/ui/bench_ui.py --quick                 # 2,000 partitions / 2,000 queries
    .venv/bin/python bench/ui/bench_ui.py                          # 10,000 / 10,000 (+ demo)
    .venv/bin/python bench/ui/bench_ui.py --skip-demo --partitions 10000 --queries 10000
"""

from __future__ import annotations

import argparse
import collections
import csv
import datetime as dt
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app" / "streamlit_app.py")
RESULTS = REPO / "bench" / "ui" / "results.csv"
PAGES = ["overview", "partitions", "workload", "recommendation", "approve_run", "whatif", "design",
         "audit"]
#: the goal at SF 1 (seconds): every page warm under the first, cold under the second
GOAL_WARM_S, GOAL_COLD_S = 1.0, 2.0
sys.path.insert(0, str(REPO))

# the repository root must be on sys.path first (the script runs from anywhere)
from engine import api  # noqa: E402
from engine.core.config import load_settings  # noqa: E402
from engine.table.model import ColumnStats, Partition, TableSchema  # noqa: E402
from engine.table.store import TableStore  # noqa: E402


def write_config(home: Path, target_rows: int) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "layout-advisor.toml").write_text(
        f'target_rows = {target_rows}\nspark_master = "local[2]"\n')


def synthetic_table(home: Path, partitions: int, queries: int, seed: int = 3) -> str:
    """A metadata-only lineitem-like table and its query log, through the engine."""
    write_config(home, 100_000)
    settings = load_settings({"home": str(home)}, environ={})
    rng = np.random.default_rng(seed)
    start = dt.date(1992, 1, 1)
    days = 6 * 365
    schema = TableSchema((("l_orderkey", "int"), ("l_quantity", "int"),
                          ("l_extendedprice", "float"), ("l_shipdate", "date"),
                          ("l_commitdate", "date"), ("l_receiptdate", "date")))
    parts = []
    rows = 100_000
    for i in range(partitions):
        o_lo = int(i * days / partitions)
        o_hi = int((i + 1) * days / partitions)
        lag = int(rng.integers(100, 1000))
        d = lambda k: start + dt.timedelta(days=k)  # noqa: E731
        cols = {
            "l_orderkey": ColumnStats(i * rows, (i + 1) * rows - 1, 0, 400_000),
            "l_quantity": ColumnStats(1, 50, 0, 100_000),
            "l_extendedprice": ColumnStats(900.0, 104_950.0, 0, 800_000),
            "l_shipdate": ColumnStats(d(o_lo + 1), d(o_hi + lag), 0, 120_000),
            "l_commitdate": ColumnStats(d(o_lo + 30), d(o_hi + 90), 0, 120_000),
            "l_receiptdate": ColumnStats(d(o_lo + 2), d(o_hi + lag + 30), 0, 120_000),
        }
        parts.append(Partition(path=f"synthetic/part-{i:06d}.parquet", rows=rows,
                               bytes=1_660_000, columns=cols, created_seq=i))
    TableStore(settings).create("synthetic", schema=schema, partitions=parts, operation="create")
    log = write_query_log(home.parent / "synthetic_queries.jsonl", "synthetic", queries, rng,
                          start, days)
    api.import_workload(settings, "synthetic", str(log))
    return "synthetic"


def write_query_log(path: Path, table: str, queries: int, rng: np.random.Generator,
                    start: dt.date, days: int, durations: bool = False) -> Path:
    """The synthetic benches' JSONL query log (this bench and ``bench_ui_scale.py``):
    ``queries`` distinct date-range counts over ``table``, 80 % on ``l_shipdate`` and the
    rest on ``l_commitdate``, each 7-90 days starting within ``days`` of ``start``, one a
    minute from 2024-01-01 (ids ``s0``, ``s1``...); with ``durations`` a ``duration_ms``
    each (0.1-10 s). Draws from ``rng`` in a fixed order, so a seed gives the same log."""
    t0 = dt.datetime(2024, 1, 1)
    with path.open("w") as fh:
        for q in range(queries):
            col = "l_shipdate" if rng.random() < 0.8 else "l_commitdate"
            lo = start + dt.timedelta(days=int(rng.integers(0, days)))
            hi = lo + dt.timedelta(days=int(rng.integers(7, 90)))
            row = {"id": f"s{q}", "ts": (t0 + dt.timedelta(minutes=q)).isoformat()}
            if durations:
                row["duration_ms"] = float(rng.uniform(100, 10_000))
            row["sql"] = (f"SELECT count(*) FROM {table} WHERE {col} BETWEEN "
                          f"DATE '{lo}' AND DATE '{hi}'")
            fh.write(json.dumps(row) + "\n")
    return path


def demo_table(home: Path) -> str:
    """The demo table from sample_data (Spark), like ``layout-advisor demo`` builds it."""
    src = REPO / "sample_data" / "lineitem.parquet"
    log = REPO / "sample_data" / "lineitem_queries.jsonl"
    if not src.exists() or not log.exists():
        raise SystemExit("sample_data/lineitem.parquet or lineitem_queries.jsonl is missing; "
                         "use --skip-demo or --demo-home")
    write_config(home, 2000)
    settings = load_settings({"home": str(home)}, environ={})
    api.create_table(settings, "lineitem", str(src), target_rows=2000)
    api.import_workload(settings, "lineitem", str(log))
    return "lineitem"


def time_pages(home: Path, table: str, runs: int) -> list[dict]:
    from streamlit.testing.v1 import AppTest  # streamlit is costly; only this step needs it

    os.environ["LAYOUT_ADVISOR_HOME"] = str(home)
    out = []
    at = AppTest.from_file(APP, default_timeout=600)
    at.session_state["table"] = table
    t = time.perf_counter()
    at.run()  # the app opens on Overview: this is Overview's cold run
    first = time.perf_counter() - t
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py")
        t = time.perf_counter()
        at.run()
        cold = first if page == "overview" else time.perf_counter() - t
        warm = []
        for _ in range(runs):
            t = time.perf_counter()
            at.run()
            warm.append(time.perf_counter() - t)
        problems = [e.value for e in at.exception] + [e.value for e in at.error]
        out.append({"page": page, "cold_s": round(cold, 3), "warm_s": round(statistics.median(warm), 3),
                    "problems": "; ".join(str(p)[:120] for p in problems)})
        print(f"  {page:15s} cold {cold:6.2f} s   warm {statistics.median(warm):6.2f} s"
              + (f"   !! {problems[0]}" if problems else ""), flush=True)
    return out


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
#: (url path, page) in navigation order
BROWSER_PAGES = [("", "overview"), ("partitions", "partitions"), ("workload", "workload"),
                 ("recommendation", "recommendation"), ("approve", "approve_run"),
                 ("whatif", "whatif"), ("design", "design"), ("audit", "audit")]
#: Streamlit's own script state on the app root ("initial", "running", "notRunning"...):
#: a full page load starts at "initial", so "notRunning" means this visit's run finished
#: (the running-man icon is not a safe signal: it shows only after a delay)
SCRIPT_IDLE_JS = ("() => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
                  "return !!app && app.getAttribute('data-test-script-state') === 'notRunning' && "
                  "document.querySelectorAll('[data-testid=\"stMainBlockContainer\"] *').length > 20; }")
#: ... and what the user sees is drawn: no element still waiting for its lazily loaded code
#: (Streamlit shows ``stSkeleton`` until e.g. plotly's 4.7 MB bundle has loaded) and every
#: visible plotly chart has drawn its SVG. Without this a page whose script finished counted
#: as done while plotly's bundle still loaded and drew (the older rule measured that way:
#: ``--until script``)
DRAWN_JS = ("(() => { const main = document.querySelector('[data-testid=\"stMainBlockContainer\"]'); "
            "if (!main) return false; "
            "for (const s of document.querySelectorAll('[data-testid=\"stSkeleton\"]')) "
            "{ if (s.offsetParent !== null) return false; } "
            "for (const c of main.querySelectorAll('[data-testid=\"stPlotlyChart\"]')) "
            "{ if (c.offsetParent !== null && !c.querySelector('.main-svg')) return false; } "
            "return true; })()")
IDLE_JS = SCRIPT_IDLE_JS[:-3] + " && " + DRAWN_JS + "; }"


#: (page, sidebar title) in BROWSER_PAGES order
NAV_TITLES = [("overview", "Overview"), ("partitions", "Partitions"), ("workload", "Workload"),
              ("recommendation", "Recommendation"), ("approve_run", "Approve and run"),
              ("whatif", "What-if"), ("design", "Design"), ("audit", "Audit log")]
#: after a sidebar click: the page's title is shown, its script run finished and (unless
#: ``--until script``) it is drawn (:data:`DRAWN_JS`)
SCRIPT_NAV_DONE_JS = ("(title) => { const app = document.querySelector('[data-testid=\"stApp\"]'); "
                      "const h1 = document.querySelector('[data-testid=\"stMainBlockContainer\"] h1'); "
                      "return !!app && app.getAttribute('data-test-script-state') === 'notRunning' && "
                      "!!h1 && h1.textContent.trim() === title; }")
NAV_DONE_JS = SCRIPT_NAV_DONE_JS[:-3] + " && " + DRAWN_JS + "; }"
#: the dashboard's server entry: "server" (app/server.py: st.App with the start-up
#: warm-up, what ``layout-advisor ui`` runs) or "streamlit_app" (the plain script)
ENTRIES = {"streamlit_app": REPO / "app" / "streamlit_app.py", "server": REPO / "app" / "server.py"}
#: the demo admin's secret when the demo was built with it set
from engine.cli.demo import DEMO_SECRET_ENV  # noqa: E402


def start_dashboard(settings, port: int, table: str, entry: str):
    """``layout-advisor ui``'s own command line and environment, with ``entry``'s script."""
    from engine.cli.ui import streamlit_command, ui_environment

    cmd = streamlit_command(port, table, "127.0.0.1")
    cmd[cmd.index(next(c for c in cmd if c.endswith(("streamlit_app.py", "server.py"))))] = str(ENTRIES[entry])
    return subprocess.Popen(cmd, env=ui_environment(settings), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def browser_times(home: Path, table: str, runs: int, timeout_s: float = 300.0,
                  entry: str = "server", settle_s: float = 0.0, trace: bool = False,
                  sign_in_as: str | None = None, pages: list[str] | None = None,
                  until: str = "drawn") -> list[dict]:
    """Per page, in headless Debian Chromium against the dashboard server: the time from
    navigation to Streamlit's idle state (the app is rendered and no script runs), the
    first visit of a fresh server (cold: caches empty) and the median of ``runs`` later
    visits (warm). Each visit is a full page load, as a user opening a link. Also the
    bytes the websocket delivered for one warm visit (the page's payload: elements,
    dataframes, chart specs), and (``nav_s``) the median time of reaching the page by a
    click in the sidebar, as a user moves between pages (no reload). ``settle_s``: seconds
    between the server being ready and the first visit (a user rarely clicks within a
    second of the URL being printed).

    ``trace``: each warm visit is also split (:mod:`bench.browser_profile`: websocket
    timeline, the renderer's main thread and JavaScript self time per bundle, CPU seconds
    of Chromium's processes and of the server); the split of the last one is printed and
    kept under ``trace``. ``sign_in_as``: after the full-load visits, sign in as this
    approver (secret from ``$LAYOUT_ADVISOR_DEMO_SECRET``, the demo's) and time the
    sidebar clicks signed in (a full reload signs out: the session is the tab's), so
    Approve and run is measured as a signed-in DBA uses it (``nav_signed_in_s``).
    ``pages``: only these pages (names of :data:`BROWSER_PAGES`). ``until``: a visit ends
    when the page is "drawn" (the script finished and every visible chart drew:
    :data:`IDLE_JS`) or, as the older rule measured, when the "script" finished."""
    from playwright.sync_api import sync_playwright  # only this mode needs playwright

    from bench.ui import browser_profile
    from engine.cli.ui import stop_ui, wait_until_ready

    settings = load_settings({"home": str(home)}, environ={})
    secret = os.environ.get(DEMO_SECRET_ENV, "") if sign_in_as else ""
    if sign_in_as and not secret:
        raise SystemExit(f"--sign-in needs the approver's secret in ${DEMO_SECRET_ENV} (build the "
                         f"demo with it set: the demo admin 'dba' then has that secret)")
    wanted = [(p, n) for p, n in BROWSER_PAGES if pages is None or n in pages]
    idle_js, nav_js = (IDLE_JS, NAV_DONE_JS) if until == "drawn" else (SCRIPT_IDLE_JS, SCRIPT_NAV_DONE_JS)
    port = 8600 + os.getpid() % 300
    proc = start_dashboard(settings, port, table, entry)
    out = []
    try:
        if not wait_until_ready(port, timeout_s=120, process=proc):
            raise SystemExit("the dashboard did not start")
        time.sleep(settle_s)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            received = [0]
            page.on("websocket", lambda ws: ws.on(
                "framereceived", lambda data: received.__setitem__(0, received[0] + len(data))))
            tracer = browser_profile.VisitTrace(page, os.getpid(), proc.pid) if trace else None

            def visit(path: str) -> float:
                t = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/{path}", wait_until="domcontentloaded")
                page.wait_for_timeout(300)  # the script starts after the websocket opens
                page.wait_for_function(idle_js, timeout=timeout_s * 1000, polling=50)
                return time.perf_counter() - t

            def click(title: str) -> float:
                """Sidebar navigation (no page reload: Streamlit's own bundle stays loaded)."""
                t = time.perf_counter()
                page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
                page.wait_for_timeout(300)
                page.wait_for_function(nav_js, arg=title, timeout=timeout_s * 1000, polling=50)
                return time.perf_counter() - t

            for path, name in wanted:
                if tracer is None:
                    cold = visit(path)
                else:
                    cold_split = tracer.measure(lambda: visit(path))
                    cold = cold_split["wall_s"]
                    print(browser_profile.format_trace(f"{name} (cold)", cold_split), flush=True)
                warm, split = [], None
                for _ in range(runs):
                    received[0] = 0
                    if tracer is None:
                        warm.append(visit(path))
                    else:
                        split = tracer.measure(lambda: visit(path))
                        warm.append(split["wall_s"])
                errors = page.locator("[data-testid='stException']").count()
                out.append({"page": name, "cold_s": round(cold, 2),
                            "warm_s": round(statistics.median(warm), 2),
                            "ws_kb": round(received[0] / 1024),
                            "problems": f"{errors} exception(s)" if errors else ""})
                print(f"  {name:15s} cold {cold:6.2f} s   warm {statistics.median(warm):6.2f} s"
                      f"   websocket {received[0] / 1024:6.0f} KB", flush=True)
                if split is not None:
                    out[-1]["trace"], out[-1]["cold_trace"] = split, cold_split
                    print(browser_profile.format_trace(name, split), flush=True)
            titles = dict(NAV_TITLES)

            def clicks(label: str, key: str) -> None:
                for row in out:
                    title = titles[row["page"]]
                    times = []
                    for _ in range(runs):
                        if tracer is None:
                            times.append(click(title))
                        else:
                            split = tracer.measure(lambda: click(title))
                            times.append(split["wall_s"])
                        click("What-if" if title != "What-if" else "Overview")  # away and back
                    row[key] = round(statistics.median(times), 2)
                    print(f"  {row['page']:15s} sidebar click{label} {row[key]:6.2f} s", flush=True)
                    if tracer is not None:
                        row[f"{key}_trace"] = split
                        print(browser_profile.format_trace(row["page"], split), flush=True)

            visit("whatif")
            clicks("", "nav_s")
            if sign_in_as:
                browser_profile.sign_in(page, sign_in_as, secret, timeout_s * 1000, idle_js)
                print(f"  signed in as {sign_in_as}", flush=True)
                clicks(f" (signed in as {sign_in_as})", "nav_signed_in_s")
            browser.close()
    finally:
        stop_ui(proc, timeout_s=15)
    return out


def page_table(rows: list[dict]) -> str:
    """The per-page table (Markdown): cold, warm, sidebar click (signed out and, when
    measured, signed in), websocket KB, and whether the page meets the goal."""
    lines = ["| page | cold s | warm s | click s | click signed in s | websocket KB | goal |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = r["warm_s"] < GOAL_WARM_S and r["cold_s"] < GOAL_COLD_S
        lines.append(f"| {r['page']} | {r['cold_s']:.2f} | {r['warm_s']:.2f} | {r.get('nav_s', '-')} | "
                     f"{r.get('nav_signed_in_s', '-')} | {r.get('ws_kb', '-')} | "
                     f"{'met' if met else 'not met'}{' ' + r['problems'] if r.get('problems') else ''} |")
    return "\n".join(lines)


def profile_pages(home: Path, table: str) -> None:
    """Server side, per page (AppTest, this process): the script's wall and CPU time (the
    process's, all threads: what the load average does not inflate) on the first and on a
    second visit, and which ``engine.api`` calls it made, how often and for how long."""
    from streamlit.testing.v1 import AppTest  # streamlit is costly; only this step needs it

    calls: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])

    def timed(name, fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                calls[name][0] += 1
                calls[name][1] += time.perf_counter() - start
        return inner

    for name in api.__all__:
        fn = getattr(api, name, None)
        if callable(fn) and not isinstance(fn, type):
            setattr(api, name, timed(name, fn))
    os.environ["LAYOUT_ADVISOR_HOME"] = str(home)
    at = AppTest.from_file(APP, default_timeout=900)
    at.session_state["table"] = table
    for page in PAGES:
        for label in ("first", "again"):
            calls.clear()
            if page != "overview" or label != "first":
                at.switch_page(f"app_pages/{page}.py")
            start, cpu = time.perf_counter(), time.process_time()
            at.run()
            took, cpu = time.perf_counter() - start, time.process_time() - cpu
            top = sorted(calls.items(), key=lambda kv: -kv[1][1])[:6]
            print(f"  {page:15s} {label:5s} {took:6.2f} s wall {cpu:6.2f} s CPU   api: "
                  + ", ".join(f"{n} {c}x {s:.2f} s" for n, (c, s) in top if s >= 0.01), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 partitions and queries")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--demo-home", help="an existing workspace holding the demo table 'lineitem'")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--browser", action="store_true",
                        help="time the pages of --demo-home in headless Chromium (navigation to "
                             "idle, cold and warm) instead of AppTest")
    parser.add_argument("--entry", choices=sorted(ENTRIES), default="server",
                        help="--browser: the server script (server: app/server.py, st.App with "
                             "the start-up warm-up, what `layout-advisor ui` runs)")
    parser.add_argument("--trace", action="store_true",
                        help="--browser: split each warm visit (websocket timeline, main thread, "
                             "JavaScript per bundle, CPU seconds of Chromium and the server)")
    parser.add_argument("--sign-in", metavar="APPROVER",
                        help="--browser: also time the sidebar clicks signed in as APPROVER "
                             f"(secret from ${DEMO_SECRET_ENV}; the demo's admin is dba)")
    parser.add_argument("--pages", help="--browser: comma-separated pages (default: all)")
    parser.add_argument("--until", choices=("drawn", "script"), default="drawn",
                        help="--browser: a visit ends when the page is drawn (default: the script "
                             "finished and every visible chart drew) or when the script finished "
                             "(the older rule)")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="--browser: seconds between the server being ready and the first visit")
    parser.add_argument("--profile", action="store_true",
                        help="per page of --demo-home: script time and engine.api calls (AppTest)")
    args = parser.parse_args(argv)
    if args.profile:
        if not args.demo_home:
            raise SystemExit("--profile needs --demo-home (a workspace holding table 'lineitem')")
        profile_pages(Path(args.demo_home), "lineitem")
        return 0
    if args.browser:
        if not args.demo_home:
            raise SystemExit("--browser needs --demo-home (a workspace holding table 'lineitem')")
        print(f"chromium: {os.getloadavg()} load average, entry {args.entry}, until {args.until}",
              flush=True)
        rows = browser_times(Path(args.demo_home), "lineitem", args.runs, entry=args.entry,
                             settle_s=args.settle, trace=args.trace, sign_in_as=args.sign_in,
                             pages=args.pages.split(",") if args.pages else None, until=args.until)
        print(f"load average after: {os.getloadavg()}", flush=True)
        print(page_table(rows), flush=True)
        return 1 if any(r["warm_s"] >= GOAL_WARM_S or r["cold_s"] >= GOAL_COLD_S for r in rows) else 0
    if args.quick:
        args.partitions, args.queries = 2000, 2000
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_ui_") as tmp:
        if not args.skip_demo:
            home = Path(args.demo_home) if args.demo_home else Path(tmp) / "demo" / "home"
            table = "lineitem" if args.demo_home else demo_table(home)
            s = load_settings({"home": str(home)}, environ={})
            n_parts = api.load_snapshot(s, table).partition_count
            n_q = len(api.workload_fragments(s, table))
            print(f"demo: {n_parts} partitions, {n_q} queries", flush=True)
            for r in time_pages(home, table, args.runs):
                rows.append({"table": "demo", "partitions": n_parts, "queries": n_q, **r})
        home = Path(tmp) / "synthetic" / "home"
        t = time.perf_counter()
        synthetic_table(home, args.partitions, args.queries)
        print(f"synthetic: {args.partitions} partitions, {args.queries} queries "
              f"(built in {time.perf_counter() - t:.1f} s)", flush=True)
        for r in time_pages(home, "synthetic", args.runs):
            rows.append({"table": "synthetic", "partitions": args.partitions,
                         "queries": args.queries, **r})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")
    slow = [r for r in rows if r["warm_s"] >= 2.0]
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
