"""Row-group scan analysis at scale: a table of N files, a share of them with
several row groups, Q one-range queries; CPU seconds of the file-level analysis and of the
row-group refinement (``engine.scan.rowgroups``), and of matching the row groups to their files.

    PYTHONPATH=. python bench/scan/bench_scan_rowgroups.py --files 1000000 --multi 0.1 --groups 3 --queries 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.scan.pruning import analyze_workload
from engine.scan.rowgroups import RowGroupMaps
from engine.table.model import ColumnZoneMap, ZoneMaps
from engine.workload.model import Range, ScanFragment


def zonemaps(lo: np.ndarray, hi: np.ndarray, rows: np.ndarray, paths: np.ndarray) -> ZoneMaps:
    n = len(rows)
    col = ColumnZoneMap("float", lo, hi, np.ones(n, bool), np.zeros(n, np.int64), rows * 8)
    return ZoneMaps(paths=paths, rows=rows, bytes=rows * 8, columns={"x": col},
                    created_seq=np.arange(n, dtype=np.int64))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--multi", type=float, default=0.1, help="share of files with several row groups")
    ap.add_argument("--groups", type=int, default=3, help="row groups of those files")
    ap.add_argument("--queries", type=int, default=1_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, g = args.files, args.groups
    # files in x order (a clustered column), 1,000 rows each; each multi file's row groups
    # split its range evenly
    lo = np.arange(n, dtype=np.float64) * 1000.0
    hi = lo + 999.0
    paths = np.array([f"f{i:07d}" for i in range(n)], dtype=object)
    files = zonemaps(lo, hi, np.full(n, 1000, np.int64), paths)
    multi = np.flatnonzero(rng.uniform(size=n) < args.multi)
    k = np.repeat(np.arange(g), len(multi))
    owner = np.tile(multi, g)
    rg_lo = lo[owner] + k * (1000.0 / g)
    rg_hi = rg_lo + 1000.0 / g - 1.0
    groups_zm = zonemaps(rg_lo, rg_hi, np.full(len(owner), 1000 // g, np.int64), paths[owner])
    frags = []
    for i in range(args.queries):
        a = rng.uniform(0, n * 1000.0)
        frags.append(ScanFragment(f"q{i}", "t", ({"x": Range(a, a + rng.uniform(100, 5_000))},), ("x",)))

    t0 = time.process_time()
    groups = RowGroupMaps.of(files, groups_zm)
    t_match = time.process_time() - t0
    analyze_workload(files, frags[:10]).bytes_scanned()  # builds the per-column sorted index once
    t0 = time.process_time()
    file_bytes = analyze_workload(files, frags).bytes_scanned()
    t_file = time.process_time() - t0
    t0 = time.process_time()
    rg_bytes = analyze_workload(files, frags, groups).bytes_scanned()
    t_rg = time.process_time() - t0
    print(f"{n:,} files, {len(multi):,} with {g} row groups ({len(groups):,} row groups held), "
          f"{args.queries:,} queries")
    print(f"match row groups to files (Arrow index_in): {t_match:.2f} CPU-s")
    print(f"file level: {t_file:.2f} CPU-s; row-group level: {t_rg:.2f} CPU-s ({t_rg / max(t_file, 1e-9):.2f}x); "
          f"bytes {rg_bytes.sum() / file_bytes.sum() - 1:+.1%}")


if __name__ == "__main__":
    main()
