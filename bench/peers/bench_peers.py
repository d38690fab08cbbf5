"""Why not just z-order? Layout Advisor's WAIR plan beside the tools a data engineer would
pick instead, each on its own fresh copy of one table, with one query log:

* ``wair``: the table registered in a fresh workspace, the log imported, WAIR's plan created
  by a signed-in proposer, approved by two other approvers, run (``engine.api``, what the
  CLI's ``plan create`` / ``plan approve`` / ``plan run`` call);
* ``pto``: PTO's whole-table design (seed 002, policy ``pto``) the same way;
* ``zorder``: delta-rs ``DeltaTable.optimize.z_order(["l_shipdate", "l_suppkey"])``, defaults;
* ``zorder_sized``: the same with ``target_size`` = the input's mean file size;
* ``compact``: delta-rs ``DeltaTable.optimize.compact()``;
* ``sort``: a full sort by ``l_shipdate`` (what Iceberg's sort strategy does): DuckDB reads
  the live files and streams sorted Arrow batches, deltalake overwrites the table with
  files of the input's mean size (``target_file_size``).

The table (:mod:`peers_setup`): real TPC-H ``lineitem`` joined to ``o_orderdate`` at
``--scale``, in ingestion order, written by deltalake as appends of ``--file-rows``; the
newest ``--second-batch`` share of the rows is held back as a second ingestion batch. The
logs: the demo's generator (:func:`engine.scenarios.demo_log.make_demo_log`, its default
count) and a drifting one (:func:`peers_setup.drift_log`).

Measured per method: files and bytes rewritten (removed) and written (added), rewrite wall
seconds (``--repeat`` fresh copies; min and median), the workload's bytes scanned by the
file statistics after (``engine.scan.pruning.analyze_fragments``), DuckDB's bytes read and
seconds running the workload over the live files (``DuckRunner.count``, profiled, one
thread), the break-even (median rewrite seconds / DuckDB seconds saved per run of the
workload). Then, on the last ``wair`` and ``zorder`` copies, the second batch is appended
and each method runs again (WAIR: a new plan in the same workspace; z-order: a re-run):
the maintenance. The drifting log is measured on the workload-independent layouts already
written and on a WAIR and a PTO plan made for it. The same data as an Iceberg table
(pyiceberg SQL catalog): WAIR and the full sort. Bytes are exact; seconds are noisy on a
shared machine. Writes ``results.json`` beside this script.

    .venv/bin/python bench/peers/bench_peers.py --quick   # SF 0.05, files of 10,000 rows, 1 repeat
    .venv/bin/python bench/peers/bench_peers.py           # SF 0.5, files of 100,000 rows, 3 repeats
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
from deltalake import DeltaTable, write_deltalake

from engine import api
from engine.core.config import load_settings
from engine.scan.pruning import analyze_fragments
from engine.scenarios import demo_log
from engine.spark.duck_runner import DuckRunner
from engine.spark.exact import sql_literal
from engine.spark.session import get_spark
from peers_setup import IcebergCopies, batches, drift_log, write_log

HERE = Path(__file__).resolve().parent
SECRET = "bench secret for the peer benchmark"
METHODS = ("wair", "pto", "zorder", "zorder_sized", "compact", "sort")
ZORDER = ["l_shipdate", "l_suppkey"]
#: PTO's design on a sample of about this many rows (the policy's ``max_design_rows``)
PTO_DESIGN_ROWS = 200_000
MIB = 2 ** 20
STARTED = time.perf_counter()


def say(msg: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.0f} s] {msg}", flush=True)


def live_files(path: Path) -> dict[str, int]:
    """{path: size in bytes} of the Delta table's live files."""
    actions = DeltaTable(str(path)).get_add_actions(flatten=True)
    actions = actions if hasattr(actions, "column") else actions.read_all()
    return dict(zip(actions.column("path").to_pylist(), actions.column("size_bytes").to_pylist()))


def append(path: Path, data, file_rows: int) -> None:
    """``data`` appended to the Delta table at ``path``, one commit of one file per ``file_rows``."""
    for i in range(0, data.num_rows, file_rows):
        write_deltalake(str(path), data.slice(i, file_rows), mode="append")


def rewrite_sort(path: Path) -> None:
    """Overwrite the table sorted by ``l_shipdate``, files of the input's mean size."""
    dt_ = DeltaTable(str(path))
    uris = dt_.file_uris()
    target = int(np.mean(list(live_files(path).values())))
    con = duckdb.connect()
    con.execute("SET threads=2")
    files = "[" + ", ".join(sql_literal(u.removeprefix("file://")) for u in uris) + "]"
    reader = con.sql(f"SELECT * FROM read_parquet({files}) ORDER BY l_shipdate").to_arrow_reader()
    write_deltalake(dt_, reader, mode="overwrite", target_file_size=target)
    con.close()


def approvers(ws):
    """(alice, bob, carol) signed in: alice admin, carol proposes, alice and bob approve."""
    api.add_approver(ws, "alice", SECRET, admin=True)
    alice = api.authenticate(ws, "alice", SECRET)
    api.add_approver(ws, "bob", SECRET, actor=alice)
    api.add_approver(ws, "carol", SECRET, actor=alice)
    return alice, api.authenticate(ws, "bob", SECRET), api.authenticate(ws, "carol", SECRET)


def plan_and_run(ws, table: str, policy: str, options: dict, people) -> dict:
    """Create ``policy``'s plan (carol), approve it (alice, bob), run it: seconds and shape."""
    alice, bob, carol = people
    t0 = time.perf_counter()
    plan = api.create_plan(ws, table, policy, options, created_by=carol)
    plan_s = time.perf_counter() - t0
    if not plan.groups:
        return {"seconds": plan_s, "plan_seconds": plan_s, "no_plan": plan.reason}
    # signed in again: a long plan creation outlives an approver's idle session
    alice, bob = (api.authenticate(ws, who.name, SECRET) for who in (alice, bob))
    if api.approve_plan(ws, plan.id, alice, reason="bench").status == "proposed":
        api.approve_plan(ws, plan.id, bob, reason="bench")
    t1 = time.perf_counter()
    result = api.run_plan(ws, plan.id, actor=alice)
    run_s = time.perf_counter() - t1
    shapes = plan.details.get("output", {}).get("groups") or [{}]
    return {"seconds": plan_s + run_s, "plan_seconds": plan_s, "run_seconds": run_s,
            "groups": len(plan.groups), "shape": shapes[0], **promise(plan, result)}


def promise(plan, result: dict) -> dict:
    """The plan's promise beside what its run re-estimated on the same window, and the
    delivery verdict (rolled back when the run made the window worse)."""
    again = result.get("re_estimated") or {}
    verdict = result.get("delivery") or {}
    saving = plan.predicted_saving or {}
    return {"predicted_saving_bytes": saving.get("bytes"), "window_queries": saving.get("window_queries"),
            "re_estimated_saving_bytes": again.get("saving_bytes"),
            "underdelivered": verdict.get("underdelivered"), "delivery": verdict.get("reason"),
            "rolled_back_to": verdict.get("rolled_back_to")}


class Planned:
    """WAIR's (or PTO's) plan on a fresh workspace per copy. The process's Spark session is
    started first and its start timed apart (``spark_start_seconds``), then one untimed plan
    runs on ``warm_table`` (``warm_up_seconds``): rewrite seconds are ``plan create`` +
    ``plan run`` on a warm session. ``last`` keeps each policy's last copy's workspace and
    people for the maintenance run."""

    spark_start_seconds: float | None = None
    warm_up_seconds: float | None = None

    def __init__(self, root: Path, log: Path, queries: int, warm_table: Path) -> None:
        self.root, self.log, self.queries, self.n = root, log, queries, 0
        self.warm_table = warm_table
        self.last: dict[str, tuple] = {}

    def warm(self) -> None:
        if Planned.spark_start_seconds is None:
            t0 = time.perf_counter()
            get_spark(load_settings({"home": str(self.root / "home-0")}, environ={}))
            Planned.spark_start_seconds = time.perf_counter() - t0
            Planned.warm_up_seconds = self.rewrite(self.warm_table, "wair").get("seconds")

    def rewrite(self, path: Path, policy: str) -> dict:
        self.n += 1
        ws = load_settings({"home": str(self.root / f"home-{self.log.stem}-{self.n}")}, environ={})
        people = approvers(ws)
        api.register_delta(ws, "lineitem", str(path))
        t0 = time.perf_counter()
        api.import_workload(ws, "lineitem", str(self.log))
        say(f"{policy}: log imported in {time.perf_counter() - t0:.1f} s (not timed as rewrite)")
        self.last[policy] = (ws, people)
        return plan_and_run(ws, "lineitem", policy, self.options(policy), people)

    def options(self, policy: str) -> dict:
        """WAIR with the CLI's defaults (its first window: a day of the table's queries);
        PTO on a sample of ``PTO_DESIGN_ROWS`` rows."""
        return {} if policy == "wair" else {"max_design_rows": PTO_DESIGN_ROWS}

    def again(self) -> dict:
        """WAIR's last copy's workspace plans again (after new files: maintenance)."""
        ws, people = self.last["wair"]
        return plan_and_run(ws, "lineitem", "wair", self.options("wair"), people)


def rewrite(method: str, path: Path, planned: Planned) -> dict:
    if method in ("wair", "pto"):
        planned.warm()
        return planned.rewrite(path, method)
    if method == "zorder":
        DeltaTable(str(path)).optimize.z_order(ZORDER)
    elif method == "zorder_sized":
        target = int(np.mean(list(live_files(path).values())))
        DeltaTable(str(path)).optimize.z_order(ZORDER, target_size=target)
    elif method == "compact":
        DeltaTable(str(path)).optimize.compact()
    elif method == "sort":
        rewrite_sort(path)
    return {}


def workload_cost(zonemaps, uris: list[str], workload: "Workload", duck: DuckRunner) -> dict:
    """Bytes scanned by the file statistics over the whole log (each distinct scan once,
    times its count: exact), DuckDB's bytes and seconds over ``uris`` for the log's
    systematic sample, scaled to the whole log."""
    scans = analyze_fragments(zonemaps, workload.distinct)
    stats_bytes = sum(s.bytes_scanned * w for s, w in zip(scans, workload.weights))
    sample = workload.sample
    duck.count(uris, sample[0], sample[0].columns)  # untimed: files into the page cache
    secs = nbytes = wall = 0.0
    for frag in sample:
        _, s, b, w = duck.count(uris, frag, frag.columns)
        secs, nbytes, wall = secs + s, nbytes + b, wall + w
    scale = workload.size / len(sample)
    return {"stats_bytes": stats_bytes, "duck_bytes": nbytes * scale, "duck_seconds": secs * scale,
            "duck_wall": wall * scale}


class Workload:
    """A log's fragments: the distinct scans (boxes and projection) with their counts, and
    every ``step``-th fragment (at most ``sample`` of them, in log order) for DuckDB."""

    def __init__(self, fragments, sample: int) -> None:
        counts: dict[str, list] = {}
        for frag in fragments:
            counts.setdefault(repr((frag.boxes, frag.columns)), [frag, 0])[1] += 1
        self.distinct = [f for f, _ in counts.values()]
        self.weights = [n for _, n in counts.values()]
        self.size = len(fragments)
        self.sample = list(fragments[::-(-len(fragments) // sample)])


class Measure:
    """One workload's fragments (imported once into a measuring workspace) and its cost on
    any Delta table or Iceberg table."""

    def __init__(self, root: Path, label: str, log: Path, base: Path, duck: DuckRunner,
                 sample: int) -> None:
        self.ws = load_settings({"home": str(root / f"measure-{label}")}, environ={})
        api.register_delta(self.ws, "lineitem", str(base))
        self.report = api.import_workload(self.ws, "lineitem", str(log))
        self.workload = Workload(api.workload_fragments(self.ws, "lineitem"), sample)
        self.duck, self.n = duck, 0

    def delta(self, path: Path) -> dict:
        self.n += 1
        zonemaps = api.register_delta(self.ws, f"t{self.n}", str(path)).zonemaps()
        uris = [u.removeprefix("file://") for u in DeltaTable(str(path)).file_uris()]
        return workload_cost(zonemaps, uris, self.workload, self.duck)

    def iceberg(self, ws, name: str, files: dict[str, int]) -> dict:
        zonemaps = api.load_snapshot(ws, name).zonemaps()
        uris = [f.removeprefix("file://") for f in files]
        return workload_cost(zonemaps, uris, self.workload, self.duck)


def row(method: str, before_files: dict, after_files: dict, seconds: list[float], after: dict,
        before: dict, extra: dict) -> dict:
    removed = {f: s for f, s in before_files.items() if f not in after_files}
    added = {f: s for f, s in after_files.items() if f not in before_files}
    saved = before["duck_seconds"] - after["duck_seconds"]
    median = statistics.median(seconds) if seconds else None
    return {"method": method, "files_before": len(before_files), "files_after": len(after_files),
            "files_rewritten": len(removed), "bytes_rewritten": sum(removed.values()),
            "files_written": len(added), "bytes_written": sum(added.values()),
            "bytes_before": sum(before_files.values()), "bytes_after": sum(after_files.values()),
            "rewrite_seconds": seconds, "rewrite_min": min(seconds) if seconds else None,
            "rewrite_median": median, **after, "duck_seconds_saved": saved,
            "stats_saved": before["stats_bytes"] - after["stats_bytes"],
            "break_even_runs": (median / saved) if (median and saved > 0) else None, **extra}


def show(title: str, before: dict, rows: list[dict]) -> None:
    say(f"== {title}: before, workload by statistics {before['stats_bytes'] / MIB:.1f} MiB, DuckDB "
          f"{before['duck_bytes'] / MIB:.1f} MiB {before['duck_seconds']:.2f} s")
    for r in rows:
        be = f"{r['break_even_runs']:.1f}" if r["break_even_runs"] is not None else "never"
        secs = (f"{r['rewrite_min']:.1f} / {r['rewrite_median']:.1f} s" if r["rewrite_min"] is not None
                else "(layout of the demo run)")
        print(f"{r['method']:>14}: {r['files_rewritten']} -> {r['files_written']} files, "
              f"{r['bytes_rewritten'] / MIB:.1f} -> {r['bytes_written'] / MIB:.1f} MiB; rewrite {secs}; "
              f"statistics {r['stats_bytes'] / MIB:.1f} MiB; DuckDB {r['duck_bytes'] / MIB:.1f} MiB "
              f"{r['duck_seconds']:.2f} s (saved {r['duck_seconds_saved']:.2f} s); break-even {be} "
              f"{r.get('no_plan', '')}", flush=True)
        if r.get("predicted_saving_bytes") is not None:
            print(f"{'':>16}promised {r['predicted_saving_bytes'] / MIB:.1f} MiB per {r['window_queries']} "
                  f"queries; run re-estimated {(r['re_estimated_saving_bytes'] or 0) / MIB:.1f} MiB; "
                  f"{r['delivery']}" + (f"; rolled back to {r['rolled_back_to']}" if r["rolled_back_to"] else ""),
                  flush=True)


def dump(out: dict, path: str) -> None:
    """The results so far (a later section's failure keeps the earlier ones)."""
    Path(path).write_text(json.dumps(out, indent=1, default=str))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=float, default=0.5, help="TPC-H scale factor")
    p.add_argument("--file-rows", type=int, default=100_000, help="rows per ingested file")
    p.add_argument("--second-batch", type=float, default=0.2,
                   help="share of the newest rows held back as the second ingestion batch")
    p.add_argument("--queries", type=int, default=demo_log.DEMO_LOG_QUERIES)
    p.add_argument("--drift-queries", type=int, default=5_000, help="queries of the drifting log")
    p.add_argument("--duck-sample", type=int, default=500,
                   help="fragments of each log DuckDB runs (a systematic sample, scaled to the log)")
    p.add_argument("--repeat", type=int, default=3,
                   help="fresh copies rewritten per delta-rs or DuckDB method")
    p.add_argument("--plan-repeat", type=int, default=1,
                   help="fresh copies (each in a fresh workspace, the log imported) per WAIR or PTO plan")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--no-drift", action="store_true", help="skip the drifting log")
    p.add_argument("--no-iceberg", action="store_true", help="skip the Iceberg table")
    p.add_argument("--out", default=str(HERE / "results.json"),
                   help="the results file (rewritten after each section)")
    p.add_argument("--quick", action="store_true", help="SF 0.05, files of 10,000 rows, one rewrite each")
    p.add_argument("--keep", metavar="DIR", help="build everything under DIR and keep it (default: a "
                   "temporary directory, removed at the end)")
    args = p.parse_args()
    if args.quick:
        args.scale, args.file_rows, args.repeat, args.plan_repeat = 0.05, 10_000, 1, 1
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in METHODS:
            p.exit(2, f"--methods: unknown method {m!r}; methods are {', '.join(METHODS)}\n")
    if not (args.scale > 0 and args.file_rows > 0 and args.queries > 0 and args.repeat > 0
            and args.plan_repeat > 0
            and args.drift_queries > 0 and args.duck_sample > 0
            and 0 < args.second_batch < 1):
        p.exit(2, "--scale, --file-rows, --queries, --drift-queries, --duck-sample, --repeat, --plan-repeat must be positive, --second-batch in (0, 1)\n")

    started = time.perf_counter()
    if args.keep and Path(args.keep).exists():
        p.exit(2, f"--keep: {args.keep} exists; give a new directory\n")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="la-bench-peers-"))
    root.mkdir(parents=True, exist_ok=True)
    first, second, first_parquet = batches(root, args.scale, args.second_batch)
    logs = {"demo": demo_log.make_demo_log(first_parquet, count=args.queries)}
    if not args.no_drift:
        logs["drift"] = drift_log(first_parquet, args.drift_queries)
    paths = {k: write_log(v, root / f"{k}.jsonl") for k, v in logs.items()}
    base = root / "base"
    append(base, first, args.file_rows)
    before_files = live_files(base)
    duck = DuckRunner(str(root / "duck"), threads=1)
    measures = {k: Measure(root, k, v, base, duck, args.duck_sample) for k, v in paths.items()}
    say(f"data and logs ready: {', '.join(f'{k} {len(v)} queries' for k, v in logs.items())}")
    before = {k: m.delta(base) for k, m in measures.items()}
    say("before measured")
    warm_table = root / "warm"  # the first few files: one untimed WAIR run warms the executor
    append(warm_table, first.slice(0, 8 * args.file_rows), args.file_rows)
    planned = {k: Planned(root, v, len(logs[k]), warm_table) for k, v in paths.items()}
    out = {"args": vars(args), "rows": first.num_rows, "second_batch_rows": second.num_rows,
           "files": len(before_files), "bytes": sum(before_files.values()),
           "import": {k: {f: m.report[f] for f in ("statements", "fragments", "skipped_count")}
                      for k, m in measures.items()},
           "load_average_start": os.getloadavg(), "before": before, "delta": {}, "drift": [], "maintenance": {}, "iceberg": {}}

    copies: dict[str, Path] = {}
    rows = []
    for method in methods:
        seconds, extra = [], {}
        for k in range(args.plan_repeat if method in ("wair", "pto") else args.repeat):
            copies[method] = copy = root / f"{method}-{k}"
            shutil.copytree(base, copy)
            t0 = time.perf_counter()
            extra = rewrite(method, copy, planned["demo"])
            say(f"{method} copy {k}: {extra.get('seconds', time.perf_counter() - t0):.1f} s")
            seconds.append(extra.pop("seconds", time.perf_counter() - t0))
        rows.append(row(method, before_files, live_files(copies[method]), seconds,
                        measures["demo"].delta(copies[method]), before["demo"], extra))
        out["delta"] = rows
        dump(out, args.out)
    out["delta"] = rows
    out["spark_start_seconds"], out["wair_warm_up_seconds"] = Planned.spark_start_seconds, Planned.warm_up_seconds
    show("Delta, demo log", before["demo"], rows)
    dump(out, args.out)

    if "drift" in measures:
        drows = []
        for method in methods:
            copy, seconds, extra = copies[method], [], {}
            if method in ("wair", "pto"):
                copy = root / f"{method}-drift"
                shutil.copytree(base, copy)
                t0 = time.perf_counter()
                extra = planned["drift"].rewrite(copy, method)
                seconds.append(extra.pop("seconds", time.perf_counter() - t0))
            drows.append(row(method, before_files, live_files(copy), seconds,
                             measures["drift"].delta(copy), before["drift"], extra))
        out["drift"] = drows
        show("Delta, drifting log", before["drift"], drows)
        dump(out, args.out)

    if "wair" in copies and "zorder" in copies:  # the second ingestion batch, then maintenance
        plain = root / "batch2-plain"
        shutil.copytree(base, plain)
        append(plain, second, args.file_rows)
        mrows, m_before = [], measures["demo"].delta(plain)
        for method in ("wair", "zorder"):
            copy = copies[method]
            append(copy, second, args.file_rows)
            grown = live_files(copy)
            t0 = time.perf_counter()
            if method == "wair":
                extra = planned["demo"].again()
            else:
                DeltaTable(str(copy)).optimize.z_order(ZORDER)
                extra = {}
            seconds = [extra.pop("seconds", time.perf_counter() - t0)]
            mrows.append(row(method, grown, live_files(copy), seconds, measures["demo"].delta(copy),
                             m_before, extra))
        out["maintenance"] = {"before": m_before, "rows": mrows}
        show("Delta after the second batch: maintenance", m_before, mrows)
        dump(out, args.out)

    if not args.no_iceberg:
        ws = load_settings({"home": str(root / "iceberg")}, environ={})
        people = approvers(ws)
        ice = IcebergCopies(root / "iceberg", first, args.file_rows)
        api.register_iceberg(ws, "ice_base", ice.copy("base"))
        i_before_files = ice.live_files("ns.base")
        i_before = measures["demo"].iceberg(ws, "ice_base", i_before_files)
        irows = []
        for method in ("wair", "sort"):
            ident = ice.copy(method)
            copy_files = ice.live_files(ident)  # the copy's own files: what a method rewrites
            t0 = time.perf_counter()
            if method == "wair":
                name = "lineitem_ice"
                api.register_iceberg(ws, name, ident)
                api.import_workload(ws, name, str(write_log(logs["demo"], root / "ice.jsonl", name)))
                extra = plan_and_run(ws, name, "wair", {}, people)
            else:
                name = "ice_sort"
                ice.sort(ident)
                extra = {"seconds": time.perf_counter() - t0}
                api.register_iceberg(ws, name, ident)
            seconds = [extra.pop("seconds")]
            files = ice.live_files(ident)
            irows.append(row(method, copy_files, files, seconds,
                             measures["demo"].iceberg(ws, name, files), i_before, extra))
        out["iceberg"] = {"before": i_before, "rows": irows}
        show("Iceberg, demo log", i_before, irows)

    out["total_seconds"] = time.perf_counter() - started
    out["load_average_end"] = os.getloadavg()
    dump(out, args.out)
    print(f"{first.num_rows} rows in {len(before_files)} files ({sum(before_files.values()) / MIB:.1f} MiB), "
          f"second batch {second.num_rows} rows; Spark start {Planned.spark_start_seconds or 0:.1f} s, "
          f"warm-up {Planned.warm_up_seconds or 0:.1f} s; total {out['total_seconds']:.0f} s", flush=True)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
