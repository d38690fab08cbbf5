"""Clustering metrics of one column over N synthetic partitions vs a stable argsort of the
2N endpoints, in the same run (goal: within 3x).

The yardstick is ``numpy.argsort(kind="stable")``: the sort the sweep needs (it orders
partitions, not just values, and ties must keep their order). ``numpy.sort`` of the values
is printed beside it for reference only: this CPU runs it as a SIMD value sort that no
algorithm needing positions can use, so ratios against it overstate the metrics' cost.

The partitions imitate ingestion order with a trailing key: partition i covers
``[base_i - spread_i, base_i]`` with ``base_i`` growing with i and spreads up to a
thousand partitions wide, so depths are in the hundreds (a realistic bad case for the
range-maximum step).

    .venv/bin/python bench/metrics/bench_metrics.py            # 1,000,000 partitions
    .venv/bin/python bench/metrics/bench_metrics.py --partitions 200000 --repeat 3
"""

from __future__ import annotations

import argparse
import csv
import platform
import time
from pathlib import Path

import numpy as np

from engine.metrics.overlap import depth_histogram, overlap_counts, partition_depths
from engine.metrics.sweep import Sweep, profile_arrays

RESULTS = Path(__file__).resolve().parent / "results.csv"


def synthetic(n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = np.arange(n, dtype=np.float64) * 10.0 + rng.uniform(0, 10, n)
    spread = rng.uniform(0, 10_000, n)
    return base - spread, base


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shuffle", action="store_true",
                    help="shuffle the partitions (no ingestion order for the sort to exploit)")
    args = ap.parse_args(argv)
    lo, hi = synthetic(args.partitions)
    if args.shuffle:
        perm = np.random.default_rng(3).permutation(args.partitions)
        lo, hi = lo[perm], hi[perm]
    endpoints = np.concatenate([lo, hi])

    t_values = best_of(args.repeat, lambda: np.sort(endpoints))  # reference only
    t_sort = best_of(args.repeat, lambda: np.argsort(endpoints, kind="stable"))
    t_over = best_of(args.repeat, lambda: overlap_counts(lo, hi))
    t_depth = best_of(args.repeat, lambda: depth_histogram(partition_depths(lo, hi)))
    t_prof = best_of(args.repeat, lambda: profile_arrays(lo, hi))

    def all_metrics() -> None:  # what column_clustering does: one sweep, every metric
        sweep = Sweep(lo, hi)
        sweep.overlaps()
        depth_histogram(sweep.depths())
        sweep.profile()

    total = best_of(args.repeat, all_metrics)
    depths = partition_depths(lo, hi)
    rows = [
        ("numpy_argsort_stable_endpoints", t_sort, 1.0),
        ("numpy_sort_values (reference)", t_values, t_values / t_sort),
        ("overlap_counts", t_over, t_over / t_sort),
        ("partition_depths+histogram", t_depth, t_depth / t_sort),
        ("depth_profile", t_prof, t_prof / t_sort),
        ("all_metrics (one sweep)", total, total / t_sort),
    ]
    order = "shuffled" if args.shuffle else "ingestion order"
    print(f"{args.partitions:,} partitions in {order} ({2 * args.partitions:,} endpoints), "
          f"average depth {depths.mean():.1f}, max {depths.max()}; best of {args.repeat}")
    for name, secs, ratio in rows:
        print(f"  {name:31s} {secs * 1000:9.1f} ms   {ratio:5.2f}x stable argsort")
    print("goal: all metrics within 3x of numpy.argsort(kind='stable') -> "
          f"{'MET' if total / t_sort <= 3 else 'MISSED'}")
    header = ["partitions", "order", "step", "seconds", "ratio_to_stable_argsort", "machine"]
    kept: list[list[str]] = []
    if RESULTS.exists():  # keep the other configurations' rows, replace this one's
        with RESULTS.open(newline="") as fh:
            old = list(csv.reader(fh))
        if old and old[0] == header:  # rows measured against another yardstick are dropped
            kept = [r for r in old[1:] if r[:2] != [str(args.partitions), order]]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(kept)
        for name, secs, ratio in rows:
            w.writerow([args.partitions, order, name, f"{secs:.4f}", f"{ratio:.2f}",
                        f"{platform.machine()} {platform.python_version()}"])
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
