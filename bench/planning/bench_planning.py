"""WAIR planning end to end as a user waits for it.

What is timed: a **cold process** running ``plan create`` through the public API
(``engine.api.create_plan``): Python start and imports (scikit-learn included), loading
the snapshot's metadata (manifest Parquet -> numpy zonemaps), reading the stored workload,
pruning every fragment of the window against the zonemaps (sparse, index-driven,
identical fragments pruned once), WAIR's streamed savings, Algorithm 2, the groups, and
storing the proposed plan. Wall time and CPU time are measured by this parent around the
child; peak RSS is the child's own ``ru_maxrss``. Each setting runs three times: min and
median are reported.

The table is metadata only (no data files; nothing reads them to plan): a native table
whose manifest has N partitions over four float columns in [0, 1]:

* ``a`` in ingestion order, each partition about ``--depth`` / N wide (so about ``depth``
  partitions overlap any value: a table clustered on ``a``);
* ``b`` narrow (``depth`` / N wide) at random places (clustered by an earlier run);
* ``c``, ``d`` wide (half the domain: unclustered).

The workload holds Q **distinct** range queries (no two share a box): 60% on ``a``, 25%
on ``b``, 15% on ``a`` and ``b``, each ``--qwidth`` wide (times U(0.5, 1.5)), projecting
``a`` and ``b``, with a measured duration of 0.1-10 s; the window is the last W of them.

Usage::

    .venv/bin/python bench/planning/bench_planning.py --quick        # 10,000 x 1,000
    .venv/bin/python bench/planning/bench_planning.py --partitions 100000 --queries 10000
    .venv/bin/python bench/planning/bench_planning.py --partitions 1000000 --queries 100000
    .venv/bin/python bench/planning/bench_planning.py --code . --code /work/main ...   # side by side
    .venv/bin/python bench/planning/bench_planning.py --manifest 100000 1000000         # manifest load

Writes ``bench/planning/results.csv`` (one row per setting; a setting run again replaces
its row) and prints it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

RESULTS = Path(__file__).parent / "results.csv"
ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("a", "b", "c", "d")
PART_BYTES = 32 * 1024 * 1024  # WAIR section 6.3: 32 MB partitions
TABLE = "events"
FIELDS = ["command", "code", "partitions", "queries", "depth", "qwidth", "runs", "selected", "groups",
          "wall_s_min", "wall_s_median", "cpu_s_min", "cpu_s_median", "peak_rss_mb_min",
          "peak_rss_mb_median", "load_average", "load_metadata_s", "load_workload_s", "prune_window_s",
          "decide_s", "distinct_queries", "scanned_per_query", "boundary_per_query"]


# ---------------------------------------------------------------------- setup (untimed)
def synthetic_bounds(n: int, depth: float, rng: np.random.Generator) -> dict[str, tuple]:
    """(lo, hi) per column for n partitions (see the module docstring)."""
    w = depth / n
    a = np.linspace(0, 1, n) + rng.normal(0, w, n)
    b = rng.uniform(0, 1, n)
    out = {}
    for c, center, width in (("a", a, w), ("b", b, w), ("c", rng.uniform(0, 1, n), 0.5),
                             ("d", rng.uniform(0, 1, n), 0.5)):
        span = width * rng.uniform(0.5, 1.5, n)
        out[c] = (center - span / 2, center + span / 2)
    return out


def write_table(settings, n: int, depth: float, rng: np.random.Generator) -> None:
    """A native table of n partitions: created with one partition through the store, then
    its manifest replaced by the generated one (same format), so setup stays seconds."""
    from engine.table import manifest
    from engine.table.model import ColumnStats, Partition, TableSchema
    from engine.table.store import TableStore

    schema = TableSchema(tuple((c, "float") for c in COLUMNS))
    one = Partition("/nonexistent/part-0.parquet", 1, 1, {c: ColumnStats(0.0, 1.0, 0, 1) for c in COLUMNS})
    snap = TableStore(settings).create(TABLE, schema=schema, partitions=[one],
                                       operation="register", managed=False, location="/nonexistent")
    info = TableStore(settings).info(TABLE)
    header = json.loads(Path(info.metadata_dir, f"snap-{int(snap.id):08d}.json").read_text())
    data: dict = {"path": pa.array([f"/nonexistent/part-{i:07d}.parquet" for i in range(n)]),
                  "rows": np.full(n, 1_000_000), "bytes": np.full(n, PART_BYTES),
                  "created_seq": np.arange(n), "rg_file": pa.nulls(n, pa.string())}
    for i, (c, (lo, hi)) in enumerate(synthetic_bounds(n, depth, rng).items()):
        data.update({f"c{i}_min": lo, f"c{i}_max": hi, f"c{i}_nulls": np.zeros(n, np.int64),
                     f"c{i}_cbytes": np.full(n, PART_BYTES // 4)})
    pq.write_table(pa.Table.from_pydict(data, schema=manifest.manifest_schema(schema)),
                   os.path.join(info.metadata_dir, header["manifest"]))


def write_workload(settings, q: int, qwidth: float, rng: np.random.Generator) -> None:
    """Q distinct range queries (see the module docstring), stored as the table's workload."""
    from engine.table.model import TableSchema
    from engine.workload.model import Range, ScanFragment
    from engine.workload.store import WorkloadStore

    frags = []
    for j in range(q):
        r = rng.uniform()
        cols = ("a",) if r < 0.60 else ("b",) if r < 0.85 else ("a", "b")
        box = {}
        for c in cols:
            lo = float(rng.uniform(0, 1 - qwidth))
            box[c] = Range(lo, lo + qwidth * float(rng.uniform(0.5, 1.5)))
        frags.append(ScanFragment(f"q{j}", TABLE, (box,), ("a", "b"),
                                  ts=f"2026-01-01T00:00:{j % 60:02d}+00:00",
                                  duration_ms=float(rng.uniform(100, 10_000))))
    WorkloadStore(settings).replace(TABLE, frags, TableSchema(tuple((c, "float") for c in COLUMNS)))


# ---------------------------------------------------------------------- manifest load
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
from manifest_helpers import MIXED_TYPES, mixed_manifest  # noqa: E402 (tests/)


MANIFEST_CHILD = """
import json, os, resource, sys, time
import pyarrow.parquet as pq
from engine.table import manifest
from engine.table.model import TableSchema
schema = TableSchema.from_json(json.loads(sys.argv[2]))
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
c, t = cpu(), time.perf_counter()
loaded = pq.read_table(sys.argv[1])
c1, t1 = cpu(), time.perf_counter()
parts = manifest.table_to_partitions(schema, loaded)
zm = manifest.table_to_zonemaps(schema, loaded)
c2, t2 = cpu(), time.perf_counter()
assert len(parts) == len(zm) == loaded.num_rows
print(json.dumps({"read_s": t1 - t, "read_cpu_s": c1 - c, "zonemaps_s": t2 - t1, "zonemaps_cpu_s": c2 - c1,
                  "load_s": t2 - t, "load_cpu_s": c2 - c}))
"""


def manifest_load(sizes: list[int], repeat: int, codes: list[Path]) -> list[dict]:
    """Seconds (wall and CPU) to read a zstd manifest of n mixed-type partitions and make
    its lazy partitions and numpy zonemaps (what loading a snapshot does), each in a fresh
    process running the engine of every tree in ``codes`` on the same file, runs
    interleaved; best and median of ``repeat``. Was a timed assertion in
    tests/engine/table/test_table_footers.py (under 2 s at 100k)."""
    rows = []
    for n in sizes:
        schema, table, _ = mixed_manifest(n)
        with tempfile.TemporaryDirectory(prefix="bench-manifest-") as tmp:
            path = os.path.join(tmp, "m.parquet")
            pq.write_table(table, path, compression="zstd")
            del table
            runs: dict[Path, list[dict]] = {c: [] for c in codes}
            for _ in range(repeat):
                for code in codes:
                    out = subprocess.run([sys.executable, "-c", MANIFEST_CHILD, path, json.dumps(schema.to_json())],
                                         capture_output=True, text=True, cwd=str(code),
                                         env={**os.environ, "PYTHONPATH": str(code)})
                    if out.returncode != 0:
                        raise SystemExit(f"manifest load failed:\n{out.stderr}")
                    runs[code].append(json.loads(out.stdout.strip().splitlines()[-1]))
        for code in codes:
            row = {"code": str(code), "partitions": n, "columns": len(MIXED_TYPES), "runs": repeat,
                   "load_average": round(os.getloadavg()[0], 1)}
            for key in ("load_s", "load_cpu_s", "read_cpu_s", "zonemaps_cpu_s"):
                vals = [r[key] for r in runs[code]]
                row[f"{key}_min"], row[f"{key}_median"] = round(min(vals), 2), round(statistics.median(vals), 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


# ---------------------------------------------------------------------- the timed child
CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from engine.api import create_plan
from engine.core.config import load_settings
home, window = sys.argv[1], int(sys.argv[2])
settings = load_settings({"home": home})
plan = create_plan(settings, %r, "wair", {"window": window, "max_window": max(window, 10)})
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"in_process_s": time.perf_counter() - t0, "peak_rss_mb": ru.ru_maxrss / 1024,
                  "partitions": plan.partition_count or 0,
                  "status": plan.status, "groups": len(plan.groups or ())}))
""" % TABLE


PRUNING_CHILD = """
import contextlib, json, os, resource, sys, time
t0 = time.perf_counter()
from engine.cli import main
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    code = main(["--home", sys.argv[1], "pruning", %r, "--json"])
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"in_process_s": time.perf_counter() - t0, "peak_rss_mb": ru.ru_maxrss / 1024,
                  "partitions": 0, "status": code, "groups": 0}))
""" % TABLE

#: what the timed child runs: ``plan create`` (WAIR) or ``pruning --json`` (every query)
CHILDREN = {"plan": CHILD, "pruning": PRUNING_CHILD}


def run_child(home: str, window: int, code: Path = ROOT, command: str = "plan") -> dict:
    """One cold ``plan create`` (or ``pruning --json`` to /dev/null) in a fresh
    interpreter running the engine found in ``code`` (this tree by default; another
    checkout, e.g. main, for a side-by-side ratio)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILDREN[command], home, str(window)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(code)}, cwd=str(code))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{command} failed:\n{out.stderr}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    data["wall_s"] = wall
    data["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return data


def phases(home: str, window: int) -> dict:
    """One in-process pass split by phase (after the timed runs; imports excluded)."""
    from engine.core.config import load_settings
    from engine.plans.service import decide
    from engine.scan.pruning import analyze_workload
    from engine.table.store import TableStore
    from engine.workload.store import WorkloadStore

    settings = load_settings({"home": home})
    t = time.perf_counter()
    snap = TableStore(settings).current_snapshot(TABLE)
    zm = snap.zonemaps()
    t_meta = time.perf_counter() - t
    t = time.perf_counter()
    frags = WorkloadStore(settings).fragments(TABLE)[-window:]
    t_wl = time.perf_counter() - t
    t = time.perf_counter()
    scans = analyze_workload(zm, frags)
    scanned = boundary = distinct = 0
    for s, _ in scans.distinct():
        distinct += 1
        scanned += s.scanned_count
        boundary += int((~s.covered).sum())
    t_prune = time.perf_counter() - t
    t = time.perf_counter()
    decide(settings, TABLE, "wair", {"window": window, "max_window": max(window, 10)})
    t_decide = time.perf_counter() - t
    return {"load_metadata_s": round(t_meta, 2), "load_workload_s": round(t_wl, 2),
            "prune_window_s": round(t_prune, 2), "decide_s": round(t_decide, 2),
            "distinct_queries": distinct, "scanned_per_query": round(scanned / max(distinct, 1), 1),
            "boundary_per_query": round(boundary / max(distinct, 1), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000, help="distinct queries = the window")
    ap.add_argument("--depth", type=float, default=8.0, help="partitions overlapping a value on a, b")
    ap.add_argument("--qwidth", type=float, default=0.001, help="query range width (domain [0, 1])")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="10,000 partitions x 1,000 queries")
    ap.add_argument("--code", type=Path, action="append",
                    help="source tree whose engine the timed child runs (default: this one); "
                         "give it twice (e.g. --code . --code /work/main) to time both on the "
                         "same table, runs interleaved")
    ap.add_argument("--manifest", type=int, nargs="*", metavar="N",
                    help="only time loading a manifest of N mixed-type partitions "
                         "(default 100000 1000000)")
    ap.add_argument("--command", choices=sorted(CHILDREN), default="plan",
                    help="what the cold child runs: plan create (default) or pruning --json")
    ap.add_argument("--no-phases", action="store_true",
                    help="skip the in-process pass split by phase (minutes at 1M x 100k)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.manifest is not None:
        manifest_load(args.manifest or [100_000, 1_000_000], args.runs,
                      [c.resolve() for c in (args.code or [ROOT])])
        return
    if args.quick:
        args.partitions, args.queries = 10_000, 1_000
    codes = [c.resolve() for c in (args.code or [ROOT])]
    from engine.core.config import load_settings

    with tempfile.TemporaryDirectory(prefix="bench-planning-") as home:
        settings = load_settings({"home": home})
        rng = np.random.default_rng(args.seed)
        t = time.perf_counter()
        write_table(settings, args.partitions, args.depth, rng)
        write_workload(settings, args.queries, args.qwidth, rng)
        print(f"setup {time.perf_counter() - t:.1f} s; load average {os.getloadavg()[0]:.1f}", flush=True)
        runs: dict[Path, list[dict]] = {c: [] for c in codes}
        for i in range(args.runs):
            for code in codes:  # interleaved: the machine's load hits every engine alike
                runs[code].append(run_child(home, args.queries, code, args.command))
                print(f"run {i + 1} {code}: load {os.getloadavg()[0]:.1f}, " + ", ".join(
                    f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}"
                    for k, v in runs[code][-1].items()), flush=True)
        timed_phases = ROOT in codes and args.command == "plan" and not args.no_phases
        split = phases(home, args.queries) if timed_phases else {}
    for code in codes:
        row = summary_row(args, code, runs[code], split if code == ROOT else {})
        for k, v in row.items():
            print(f"{k:>20}: {v}")
        if not args.no_write:
            append_row(row)


def summary_row(args: argparse.Namespace, code: Path, runs: list[dict], split: dict) -> dict:
    """One CSV row: min and median of wall, CPU and peak RSS over the runs."""
    row = {"command": args.command, "code": str(code), "partitions": args.partitions, "queries": args.queries,
           "depth": args.depth, "qwidth": args.qwidth, "runs": len(runs),
           "selected": runs[-1]["partitions"], "groups": runs[-1]["groups"]}
    for key in ("wall_s", "cpu_s", "peak_rss_mb"):
        vals = [r[key] for r in runs]
        row[f"{key}_min"] = round(min(vals), 2)
        row[f"{key}_median"] = round(statistics.median(vals), 2)
    row["load_average"] = round(os.getloadavg()[0], 1)
    row.update(split)
    return row


def append_row(row: dict) -> None:
    """Add a row to the results CSV: the row of the same setting (command, partitions,
    queries) from an earlier run is replaced, the other settings' rows stay."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    key = ("command", "partitions", "queries")
    old: list[dict] = []
    if RESULTS.exists():
        with RESULTS.open(newline="") as fh:
            old = [r for r in csv.DictReader(fh) if "code" in r
                   and any(str(r.get(k)) != str(row.get(k)) for k in key)]
    with RESULTS.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, restval="", extrasaction="ignore")
        w.writeheader()
        w.writerows([*old, row])


if __name__ == "__main__":
    main()
