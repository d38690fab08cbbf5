"""``layout-advisor plan create --policy wair --window W``, the whole command, cold.

What is timed: one fresh ``layout-advisor`` process per run under ``/usr/bin/time -v``
(wall seconds, user + system CPU seconds and the process's peak RSS as ``time``
reports them; on a shared machine the CPU seconds and the ratio against another engine
run interleaved with ``--code`` are the figures): Python start, every
import, the workspace, the snapshot's zonemaps, the stored workload, pruning the window,
WAIR's savings, Algorithm 2, the groups, the predicted losses (every group's new files
predicted from the zonemaps, :mod:`engine.policy.impact`), storing the plan and printing
it. Runs are one at a time; each window is a separate setting.

The table is metadata only (a native table whose manifest is generated; nothing reads
data files to plan), N small files as streaming ingestion leaves them (``--file-bytes``,
16 KiB by default, so the memory budget admits every file into one sort group and WAIR's
groups are as large as its selection: the planner's per-group work at its largest):

* ``ts`` in ingestion order, each file about 8 / N of the domain wide (clustered);
* ``k`` the hot column, unclustered: each file spans U(0.5, 1.5) x ``--k-width`` of the
  domain at a random place (about ``k-width`` x N files overlap any value);
* ``c`` half the domain wide (unclustered, never filtered).

The workload is Q **distinct** SQL queries imported through ``workload import`` (a
``.jsonl`` log, untimed setup): 70% ``k BETWEEN x AND y`` (``--qwidth`` x U(0.5, 1.5)
wide), 20% on ``ts``, 10% on both, each with a measured duration.

Every run starts from the workspace as setup left it (WAIR stores its adaptive window
and credit after a decision), restored from a pristine copy beside it.

Usage::

    .venv/bin/python bench/planning/bench_plan_create.py --files 100000 --queries 10000 --windows 1000 10000 all
    .venv/bin/python bench/planning/bench_plan_create.py --files 1000000 --queries 100000 --windows 1000 10000
    .venv/bin/python bench/planning/bench_plan_create.py --quick      # 10,000 x 1,000, windows 1000 all
    ... --home DIR --setup-only   # build once; later runs with the same --home reuse it
    ... --code /tmp/engine-before --code .   # another tree's engine beside this one, interleaved
    ... --runs 3                  # median and min of wall and CPU seconds

Writes ``bench/planning/plan_create.csv`` (one row per code, size and window; a setting
run again replaces its row) and prints each run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
# the children run this tree's engine, with Python's bytecode cache as an installed
# package has it (a process that compiles every module it imports pays seconds more)
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}
RESULTS = Path(__file__).parent / "plan_create.csv"
TABLE = "events"
SETUP_DONE = "bench-setup.json"  # in a kept --home: the workspace is built, runs reuse it
COLUMNS = ("ts", "k", "c")
FIELDS = ["code", "files", "queries", "window", "file_bytes", "k_width", "qwidth", "runs", "status",
          "partitions", "groups", "wall_s", "wall_s_min", "cpu_s", "cpu_s_min", "peak_rss_mb", "load_average"]


def write_table(home: str, n: int, file_bytes: int, k_width: float, rng: np.random.Generator) -> None:
    """A native table of n files: created with one file through the store, then its
    manifest replaced by the generated one (same format), so setup takes seconds."""
    sys.path.insert(0, str(ROOT))
    from engine.core.config import load_settings
    from engine.table import manifest
    from engine.table.model import ColumnStats, Partition, TableSchema
    from engine.table.store import TableStore

    settings = load_settings({"home": home})
    schema = TableSchema(tuple((c, "float") for c in COLUMNS))
    one = Partition("/nonexistent/part-0.parquet", 1, 1, {c: ColumnStats(0.0, 1.0, 0, 1) for c in COLUMNS})
    snap = TableStore(settings).create(TABLE, schema=schema, partitions=[one],
                                       operation="register", managed=False, location="/nonexistent")
    info = TableStore(settings).info(TABLE)
    header = json.loads(Path(info.metadata_dir, f"snap-{int(snap.id):08d}.json").read_text())
    ts_w = 8.0 / n
    ts = np.linspace(0, 1, n) + rng.normal(0, ts_w, n)
    bounds = {"ts": (ts, ts_w), "k": (rng.uniform(0, 1, n), k_width), "c": (rng.uniform(0, 1, n), 0.5)}
    data: dict = {"path": pa.array([f"/nonexistent/part-{i:07d}.parquet" for i in range(n)]),
                  "rows": np.full(n, max(1, file_bytes // 8)), "bytes": np.full(n, file_bytes),
                  "created_seq": np.arange(n), "rg_file": pa.nulls(n, pa.string())}
    for i, c in enumerate(COLUMNS):
        center, width = bounds[c]
        span = width * rng.uniform(0.5, 1.5, n)
        data.update({f"c{i}_min": center - span / 2, f"c{i}_max": center + span / 2,
                     f"c{i}_nulls": np.zeros(n, np.int64), f"c{i}_cbytes": np.full(n, file_bytes // 4)})
    pq.write_table(pa.Table.from_pydict(data, schema=manifest.manifest_schema(schema)),
                   os.path.join(info.metadata_dir, header["manifest"]))


def write_log(path: str, q: int, qwidth: float, rng: np.random.Generator) -> None:
    """Q distinct queries as a ``.jsonl`` log (module docstring)."""
    with open(path, "w") as fh:
        for j in range(q):
            r = rng.uniform()
            cols = ("k",) if r < 0.70 else ("ts",) if r < 0.90 else ("k", "ts")
            where = []
            for c in cols:
                lo = float(rng.uniform(0, 1 - qwidth))
                where.append(f"{c} BETWEEN {lo:.9f} AND {lo + qwidth * float(rng.uniform(0.5, 1.5)):.9f}")
            sql = f"SELECT ts, k FROM {TABLE} WHERE " + " AND ".join(where)
            ts = f"2026-01-01T{(j // 3600) % 24:02d}:{(j // 60) % 60:02d}:{j % 60:02d}+00:00"
            fh.write(json.dumps({"id": f"q{j}", "ts": ts, "sql": sql,
                                 "duration_ms": round(float(rng.uniform(100, 10_000)), 1)}) + "\n")


def import_log(home: str, path: str) -> dict:
    """``workload import`` of the log (untimed setup)."""
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "layout-advisor"), "--home", home, "workload", "import",
                          TABLE, path, "--replace", "--json"], capture_output=True, text=True, cwd=str(ROOT), env=ENV)
    if out.returncode != 0:
        raise SystemExit(f"workload import failed:\n{out.stderr}")
    return json.loads(out.stdout)


def time_plan_create(home: str, window: int, timeout_s: float, code: Path = ROOT) -> dict:
    """One cold ``plan create`` under ``/usr/bin/time -v`` running the engine in ``code``
    (this tree by default); stopped (its whole process group) after ``timeout_s``."""
    cmd = ["/usr/bin/time", "-v", str(ROOT / ".venv" / "bin" / "layout-advisor"), "--home", home,
           "plan", "create", TABLE, "--policy", "wair", "--window", str(window), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT),
                            env={**ENV, "PYTHONPATH": str(code)}, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": f"stopped after {timeout_s:.0f} s", "wall_s": round(time.perf_counter() - t0, 2)}
    out = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    wall = time.perf_counter() - t0
    report = dict(line.strip().rsplit(": ", 1) for line in out.stderr.splitlines()
                  if line.startswith("\t") and ": " in line)
    rss_kb = int(report.get("Maximum resident set size (kbytes)", 0))
    if out.returncode != 0:  # the failure's last line (a MemoryError, a signal) is the figure
        said = [line for line in out.stderr.splitlines() if line.strip() and not line.startswith("\t")
                and not line.startswith("Command ")]
        return {"status": f"exit {out.returncode}: {said[-1] if said else ''}"[:300],
                "wall_s": round(wall, 2), "peak_rss_mb": round(rss_kb / 1024)}
    plan = json.loads(out.stdout)
    h, m, s = (["0"] + report["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"))[-3:]
    return {"status": plan.get("status"), "partitions": plan.get("partition_count") or 0,
            "groups": len(plan.get("groups") or ()),
            "wall_s": round(int(h) * 3600 + int(m) * 60 + float(s), 2),
            "peak_rss_mb": round(rss_kb / 1024),
            "cpu_s": round(float(report["User time (seconds)"]) + float(report["System time (seconds)"]), 2)}


def summary(runs: list[dict]) -> dict:
    """Median and min of wall and CPU seconds over ``runs``, the largest peak RSS; a run
    that failed or was stopped makes the row that run's status."""
    bad = [r for r in runs if "cpu_s" not in r]
    if bad:
        return {**bad[0], "runs": len(runs)}
    out = {k: runs[-1][k] for k in ("status", "partitions", "groups")}
    for key in ("wall_s", "cpu_s"):
        vals = [r[key] for r in runs]
        out[key], out[f"{key}_min"] = round(statistics.median(vals), 2), round(min(vals), 2)
    return {**out, "runs": len(runs), "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}


def append_rows(rows: list[dict]) -> None:
    """Add rows to the results CSV, replacing an earlier row of the same setting."""
    key = ("code", "files", "queries", "window", "file_bytes")
    old: list[dict] = []
    if RESULTS.exists():
        with RESULTS.open(newline="") as fh:
            old = [r for r in csv.DictReader(fh)
                   if not any(all(str(r.get(k)) == str(row.get(k)) for k in key) for row in rows)]
    with RESULTS.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, restval="", extrasaction="ignore")
        w.writeheader()
        w.writerows([*old, *rows])


def restore(home: str) -> None:
    """The workspace as setup left it (WAIR stores its window and credit after a decision),
    at its own path (a workspace refuses to run from a copy); the first call keeps a
    pristine copy beside it."""
    pristine = home.rstrip("/") + ".pristine"
    if not os.path.exists(pristine):
        shutil.copytree(home, pristine)
    else:
        shutil.rmtree(home)
        shutil.copytree(pristine, home)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000, help="distinct queries imported")
    ap.add_argument("--windows", nargs="+", default=["1000", "10000", "all"],
                    help="--window values; 'all' is the whole log")
    ap.add_argument("--file-bytes", type=int, default=16 * 1024)
    ap.add_argument("--k-width", type=float, default=0.01, help="width of a file's k range (domain [0, 1])")
    ap.add_argument("--qwidth", type=float, default=0.001, help="query range width (domain [0, 1])")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--home", help="keep the workspace here (default: a temporary folder)")
    ap.add_argument("--quick", action="store_true", help="10,000 files x 1,000 queries")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before a run is stopped")
    ap.add_argument("--setup-only", action="store_true", help="build the workspace (--home) and stop")
    ap.add_argument("--runs", type=int, default=1, help="runs per window and code (median, min)")
    ap.add_argument("--code", type=Path, action="append",
                    help="source tree whose engine runs the command (default: this one); give it "
                         "twice (e.g. a copy of an earlier engine and .) for a side-by-side "
                         "ratio, runs interleaved")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.files, args.queries, args.windows = 10_000, 1_000, ["1000", "all"]
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-plan-create-") as tmp:
        home = args.home or os.path.join(tmp, "home")
        if os.path.exists(os.path.join(home, SETUP_DONE)):
            print(f"reusing the workspace in {home}", flush=True)
        else:
            t = time.perf_counter()
            write_table(home, args.files, args.file_bytes, args.k_width, rng)
            log = os.path.join(tmp, "queries.jsonl")
            write_log(log, args.queries, args.qwidth, rng)
            imported = import_log(home, log)
            Path(home, SETUP_DONE).write_text(json.dumps(vars(args)))
            print(f"setup {time.perf_counter() - t:.1f} s: {args.files} files, "
                  f"{imported.get('fragments')} fragments imported", flush=True)
        rows = []
        codes = [c.resolve() for c in (args.code or [ROOT])]
        for window in ([] if args.setup_only else args.windows):
            w = args.queries if window == "all" else int(window)
            runs: dict[Path, list[dict]] = {c: [] for c in codes}
            for _ in range(args.runs):
                for code in codes:  # interleaved: the machine's load hits every engine alike
                    restore(home)
                    runs[code].append(time_plan_create(home, w, args.timeout, code))
                    print(json.dumps({"code": str(code), "window": window, **runs[code][-1]}), flush=True)
            for code in codes:
                row = {"code": "this tree" if code == ROOT else str(code), "files": args.files, "queries": args.queries, "window": window,
                       "file_bytes": args.file_bytes, "k_width": args.k_width, "qwidth": args.qwidth,
                       **summary(runs[code]), "load_average": round(os.getloadavg()[0], 1)}
                print(json.dumps(row), flush=True)
                rows.append(row)
    if not args.no_write:
        append_rows(rows)


if __name__ == "__main__":
    main()
