"""The library defaults of PTO's open costs c_file and c_rg (decision 6), measured.

Runs :func:`bench.pto_replication.calibrate` (DuckDB, one thread: 1M rows of 4 int64
columns as 1 file of 10 row groups, 1 file of 500 row groups and 500 one-row-group files,
7 interleaved rounds, the median round) ``--runs`` times on the process's CPU clock and
prints each run's c_file and c_rg in row-equivalents, their median over runs, and that
median rounded to the defaults' precision (c_file to 500 rows, c_rg to 100), the values
``engine.design.pto.labels.C_FILE_ROWS`` / ``C_RG_ROWS`` take (bench/pto/README.md).
The wall clock is printed beside it on request (``--wall``); on a shared machine it
measures the scheduler (238-3,360 for c_file at load 30-46).

Run: ``PYTHONPATH=. python bench/pto/pto_open_costs.py --runs 3`` (about 2 minutes a run on 2
quiet cores).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.pto.pto_replication import calibrate
from engine.design.pto import labels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--wall", action="store_true", help="also calibrate on the wall clock")
    args = ap.parse_args()
    out: dict[str, list[tuple[float, float]]] = {}
    clocks = ("cpu", "wall") if args.wall else ("cpu",)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for clock in clocks:
                t0 = time.perf_counter()
                out.setdefault(clock, []).append(calibrate(Path(tmp), clock=clock))
                print(f"run {i + 1} ({clock}): {time.perf_counter() - t0:.0f} s wall", flush=True)
    for clock, runs in out.items():
        f = float(np.median([r[0] for r in runs]))
        g = float(np.median([r[1] for r in runs]))
        print(f"\n{clock} clock, {len(runs)} runs: c_file {', '.join(f'{r[0]:.0f}' for r in runs)} -> median "
              f"{f:.0f}; c_rg {', '.join(f'{r[1]:.0f}' for r in runs)} -> median {g:.0f}")
        print(f"  as defaults: C_FILE_ROWS = {500 * round(f / 500):,}, C_RG_ROWS = {100 * round(g / 100):,} "
              f"(library now: {labels.C_FILE_ROWS:,.0f}, {labels.C_RG_ROWS:,.0f})")
    print(f"load at the end {open('/proc/loadavg').read().split()[0]}")


if __name__ == "__main__":
    main()
