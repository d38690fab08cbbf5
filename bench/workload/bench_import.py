"""Query-log import at scale and under hostile logs, in a cold process.

What is timed: one fresh Python process per run under ``/usr/bin/time -v`` that opens the
workspace and runs :func:`engine.workload.importer.import_log` (what ``layout-advisor
workload import`` does before it stores the dashboard's summaries): Python start and
imports, reading the log in chunks, parsing each line, analysing each distinct statement
once (sqlglot), writing every fragment to the workload file and publishing it. Wall time,
user+system CPU and peak RSS are ``time -v``'s. ``--cli`` times the whole command instead
(including the summaries it stores after an import).

Logs (setup, untimed), for a registered 1,000-row Parquet table ``li``:

* ``jsonl``: N lines ``{"ts", "id", "sql", "duration_ms", "user"}``, about 100 bytes each,
  over D distinct statements (range and IN predicates on four columns, literals vary
  across the D shapes) in a shuffled order, one line in 1,000 invalid JSON;
* ``--hostile``: the three logs that once took minutes and gigabytes: a 1 MiB ``.jsonl.gz``
  inflating to 1 GiB of blanks (one line of spaces), a ``.sql`` log holding one 10 MB
  statement between two small ones, and a 6.4 MiB PostgreSQL ``.sql`` log of 50 distinct
  statements with ``-- ts:`` comments, ``$1`` placeholders and ``$$`` bodies, imported
  with ``--dialect postgres``.

Usage::

    .venv/bin/python bench/workload/bench_import.py --lines 1000000 --distinct 20000
    .venv/bin/python bench/workload/bench_import.py --quick          # 100,000 lines
    .venv/bin/python bench/workload/bench_import.py --hostile --lines 0

Writes ``bench/workload/results.csv`` (one row per log; a log run again replaces its row)
and prints the rows.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

RESULTS = Path(__file__).parent / "results.csv"
ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(ROOT / ".venv" / "bin" / "python")
TABLE = "li"
FIELDS = ["log", "mode", "lines", "distinct", "log_mb", "statements", "fragments", "skipped",
          "wall_s", "cpu_s", "peak_rss_mb", "load_average", "status"]
CHILD = """
import json, sys
from engine.workspace import Workspace
from engine.workload.importer import import_log, ReadLimits
ws = Workspace.open(sys.argv[1])
limits = ReadLimits(ws.settings.workload_max_line_bytes, ws.settings.workload_max_statement_chars)
r = import_log(ws.tables, ws.workloads, "li", sys.argv[2], dialect=sys.argv[3] or None,
               replace=True, limits=limits).to_dict()
r.pop("skipped")
print(json.dumps(r))
"""


# ---------------------------------------------------------------------- setup (untimed)
def make_table(home: Path, data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    n = 1000
    pq.write_table(pa.table({
        "l_orderkey": pa.array(range(n), pa.int64()),
        "l_quantity": pa.array([i % 50 for i in range(n)], pa.int32()),
        "l_shipdate": pa.array([dt.date(1994, 1, 1) + dt.timedelta(days=i % 2000)
                                for i in range(n)], pa.date32()),
        "l_shipmode": pa.array(["AIR", "MAIL", "SHIP", "RAIL"] * (n // 4)),
    }), data / "part-0.parquet")
    out = subprocess.run([PYTHON, "-c", "import sys; from engine import api; "
                          "from engine.workspace import Workspace; "
                          "api.register_table(Workspace.open(sys.argv[1]), 'li', sys.argv[2])",
                          str(home), str(data)], capture_output=True, text=True, cwd=str(ROOT))
    if out.returncode != 0:
        raise SystemExit(f"table register failed:\n{out.stderr}")


def shape(k: int) -> str:
    """The k-th distinct statement."""
    r = random.Random(k)
    kind = k % 4
    if kind == 0:
        lo = r.randrange(0, 900)
        return f"SELECT l_orderkey, l_quantity FROM li WHERE l_orderkey BETWEEN {lo} AND {lo + r.randrange(1, 100)}"
    if kind == 1:
        day = dt.date(1994, 1, 1) + dt.timedelta(days=r.randrange(0, 1900))
        return (f"SELECT sum(l_quantity) FROM li WHERE l_shipdate >= DATE '{day}' "
                f"AND l_shipdate < DATE '{day + dt.timedelta(days=r.randrange(1, 90))}'")
    if kind == 2:
        return f"SELECT count(*) FROM li WHERE l_quantity < {r.randrange(1, 50)} AND l_shipmode IN ('AIR', 'MAIL')"
    return f"SELECT * FROM li WHERE l_orderkey = {r.randrange(0, 1000)} OR l_quantity > {r.randrange(0, 50)}"


def write_jsonl(path: Path, lines: int, distinct: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    shapes = [shape(k) for k in range(distinct)]
    with path.open("w") as fh:
        for i in range(lines):
            if i % 1000 == 999:
                fh.write('{"sql": "SELECT 1 FROM li WHERE\n')
                continue
            fh.write(json.dumps({"ts": 1_700_000_000 + i, "id": f"q{i}",
                                 "sql": shapes[rng.randrange(distinct)],
                                 "duration_ms": rng.randrange(10, 10_000), "user": "bi"}) + "\n")


def write_hostile(folder: Path) -> list[Path]:
    blanks = folder / "blanks.jsonl.gz"
    with blanks.open("wb") as raw:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip container
        spaces = b" " * (1 << 20)
        for _ in range(1024):
            raw.write(z.compress(spaces))
        raw.write(z.compress(b"\n"))
        raw.write(z.flush())
    huge = folder / "huge.sql"
    big = "SELECT l_orderkey FROM li WHERE l_orderkey IN (" + ", ".join(
        str(i % 1000) for i in range(2_040_000)) + ")"
    small = "SELECT l_orderkey FROM li WHERE l_orderkey < 5"
    huge.write_text(f"{small};\n{big};\n{small};\n")
    pg = folder / "postgres.sql"
    with pg.open("w") as fh:
        i = 0
        while fh.tell() < 6.4 * (1 << 20):
            fh.write(f"-- ts: 2024-01-01T00:00:{i % 60:02d}\n"
                     f"SELECT l_orderkey FROM li WHERE l_orderkey BETWEEN $1 AND $2 AND l_shipmode = $3"
                     f" AND l_quantity < {i % 50} AND 'a;b' <> $$c;d$$;\n")
            i += 1
    return [blanks, huge, pg]


# ---------------------------------------------------------------------- timed
def timed(home: Path, log: Path, cli: bool) -> dict:
    """One cold import of ``log`` under ``/usr/bin/time -v`` (PostgreSQL's dialect for a
    log whose name says ``postgres``)."""
    dialect = "postgres" if "postgres" in log.name else ""
    if cli:
        cmd = [str(ROOT / ".venv" / "bin" / "layout-advisor"), "--home", str(home), "workload",
               "import", TABLE, str(log), "--replace", "--json",
               *(["--dialect", dialect] if dialect else [])]
    else:
        cmd = [PYTHON, "-c", CHILD, str(home), str(log), dialect]
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True,
                         cwd=str(ROOT))
    report = dict(line.strip().rsplit(": ", 1) for line in out.stderr.splitlines()
                  if line.startswith("\t") and ": " in line)
    h, m, s = (["0"] + report["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"))[-3:]
    row = {"wall_s": round(int(h) * 3600 + int(m) * 60 + float(s), 2),
           "cpu_s": round(float(report["User time (seconds)"])
                          + float(report["System time (seconds)"]), 2),
           "peak_rss_mb": round(int(report["Maximum resident set size (kbytes)"]) / 1024),
           "load_average": round(os.getloadavg()[0], 1)}
    if out.returncode != 0:
        tail = [x for x in out.stderr.splitlines() if not x.startswith("\t")]
        return {**row, "status": f"exit {out.returncode}: {tail[-1] if tail else ''}"}
    r = json.loads(out.stdout)
    return {**row, "status": "ok", "statements": r["statements"], "fragments": r["fragments"],
            "skipped": r.get("skipped_count", "")}


def save(rows: list[dict]) -> None:
    """Add rows to the results CSV, replacing an earlier row of the same log and mode."""
    key = ("log", "mode", "lines", "distinct")
    old: list[dict] = []
    if RESULTS.exists():
        with RESULTS.open(newline="") as fh:
            old = [r for r in csv.DictReader(fh)
                   if not any(all(str(r.get(k)) == str(row.get(k)) for k in key) for row in rows)]
    with RESULTS.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, restval="", extrasaction="ignore")
        w.writeheader()
        w.writerows([*old, *rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000, help="JSONL lines (0: none)")
    ap.add_argument("--distinct", type=int, default=20_000, help="distinct statements")
    ap.add_argument("--quick", action="store_true", help="100,000 lines")
    ap.add_argument("--hostile", action="store_true", help="also the three hostile logs")
    ap.add_argument("--cli", action="store_true",
                    help="time `layout-advisor workload import` (with its summaries)")
    ap.add_argument("--work", default=None, help="folder for the workspace and logs")
    args = ap.parse_args()
    lines = 100_000 if args.quick else args.lines
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-workload-"))
    home = work / "home"
    if not (home / "tables").exists():
        make_table(home, work / "data")
    mode = "cli" if args.cli else "import_log"
    rows = []
    if lines:
        log = work / f"log-{lines}-{args.distinct}.jsonl"
        if not log.exists():
            write_jsonl(log, lines, args.distinct)
        rows.append({"log": "jsonl", "mode": mode, "lines": lines, "distinct": args.distinct,
                     "log_mb": round(log.stat().st_size / 2**20, 1), **timed(home, log, args.cli)})
    if args.hostile:
        for log in write_hostile(work):
            rows.append({"log": log.name, "mode": mode, "lines": "", "distinct": "",
                         "log_mb": round(log.stat().st_size / 2**20, 1),
                         **timed(home, log, args.cli)})
    save(rows)
    w = csv.DictWriter(sys.stdout, fieldnames=FIELDS, restval="", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)


if __name__ == "__main__":
    main()
