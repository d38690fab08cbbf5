"""Planning time of WAIR at scale (goal: < 10 s at 100,000 partitions, 10,000 queries).

Synthetic, metadata only (no files, no Spark): a table of N partitions with four numeric
columns in [0, 1]

* ``a`` follows ingestion order with some jitter (each partition spans ~``--width``);
* ``b`` is randomly placed but narrow (a column clustered by an earlier WAIR run);
* ``c``, ``d`` are wide (unclustered);

and a window of Q range queries: 60% on ``a``, 25% on ``b``, 15% on ``a`` and ``b``, each
about ``--qwidth`` wide. Pruning results (:class:`engine.scan.pruning.FragmentScan`) are computed
with numpy for a pool of ``--pool`` distinct queries and shared by the Q fragments (dense
per-query arrays for 10,000 x 100,000 would need ~18 GB); the planner still processes every
fragment of the window independently, so the timing is that of Q distinct scans.

Timed: the equation-3 savings pass, Algorithm 2's cut, and ``WairPolicy.propose`` end to end
(savings + cut + gates + signatures/DBSCAN + grouping + chunking + evidence).

Usage::

    .venv/bin/python bench/bench_planning.py --quick            # 10,000 x 1,000
    .venv/bin/python bench/bench_planning.py                    # 100,000 x 10,000

Writes ``bench/results/planning.csv`` (one row per run, appended) and prints a summary.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import time
from pathlib import Path

import numpy as np

from engine.core.config import Settings
from engine.policy.base import PolicyContext
from engine.policy.wair import WairPolicy, algorithm2_cut
from engine.policy.wair.savings import breakdown_for_window
from engine.scan.pruning import FragmentScan
from engine.table.model import ColumnZoneMap, ZoneMaps
from engine.workload.model import Range, ScanFragment

RESULTS = Path(__file__).parent / "results" / "planning.csv"
COLUMNS = ("a", "b", "c", "d")
PART_BYTES = 32 * 1024 * 1024  # section 6.3: 32 MB partitions


def synthetic_zonemaps(n: int, width: float, rng: np.random.Generator) -> ZoneMaps:
    """Columnar zonemaps for n partitions (built directly: no Partition objects)."""
    centers = {
        "a": np.linspace(0, 1, n) + rng.normal(0, width, n),
        "b": rng.uniform(0, 1, n),
        "c": rng.uniform(0, 1, n),
        "d": rng.uniform(0, 1, n),
    }
    widths = {"a": width, "b": width, "c": 0.5, "d": 0.5}
    cols = {}
    for c in COLUMNS:
        w = widths[c] * rng.uniform(0.5, 1.5, n)
        lo = centers[c] - w / 2
        cols[c] = ColumnZoneMap("float", lo, lo + w, np.ones(n, dtype=bool),
                                np.zeros(n, dtype=np.int64),
                                np.full(n, PART_BYTES // 4, dtype=np.int64))
    return ZoneMaps(paths=np.array([f"part-{i:07d}.parquet" for i in range(n)], dtype=object),
                    rows=np.full(n, 1_000_000, dtype=np.int64),
                    bytes=np.full(n, PART_BYTES, dtype=np.int64), columns=cols,
                    created_seq=np.arange(n, dtype=np.int64))


def synthetic_box(qwidth: float, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    r = rng.uniform()
    cols = ("a",) if r < 0.60 else ("b",) if r < 0.85 else ("a", "b")
    box = {}
    for c in cols:
        lo = rng.uniform(0, 1 - qwidth)
        box[c] = (lo, lo + qwidth * rng.uniform(0.5, 1.5))
    return box


def scan_of(zm: ZoneMaps, qid: str, box: dict[str, tuple[float, float]],
            read_bytes: np.ndarray) -> FragmentScan:
    """Zonemap pruning of one box, utilization estimated as uniform within the ranges."""
    n = len(zm)
    scanned = np.ones(n, dtype=bool)
    covered = np.ones(n, dtype=bool)
    util = np.ones(n, dtype=np.float32)
    for c, (l, r) in box.items():
        lo, hi = zm.columns[c].lo, zm.columns[c].hi
        scanned &= (lo <= r) & (hi >= l)
        covered &= (lo >= l) & (hi <= r)
        frac = (np.minimum(hi, r) - np.maximum(lo, l)) / np.maximum(hi - lo, 1e-12)
        util *= np.clip(frac, 0.0, 1.0).astype(np.float32)
    util[~scanned] = 0.0
    util[covered] = 1.0
    return FragmentScan(qid, scanned, covered & scanned, util, read_bytes, tuple(box))


def run(n: int, q: int, pool: int, width: float, qwidth: float, seed: int,
        hybrid: bool) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    zm = synthetic_zonemaps(n, width, rng)
    read_bytes = zm.read_bytes(["a", "b"])  # the queries project two of four columns
    boxes = [synthetic_box(qwidth, rng) for _ in range(pool)]
    pool_scans = [scan_of(zm, f"t{i}", b, read_bytes) for i, b in enumerate(boxes)]
    frags, scans = [], []
    for j in range(q):
        k = j % pool
        frags.append(ScanFragment(f"q{j}", "t", ({c: Range(lo, hi) for c, (lo, hi) in boxes[k].items()},),
                                  ("a", "b")))
        s = pool_scans[k]
        scans.append(FragmentScan(f"q{j}", s.scanned, s.fully_covered, s.utilization,
                                  s.read_bytes, s.predicated_columns))
    t_build = time.perf_counter() - t0
    settings = Settings()
    pairs = sum(int(s.boundary.sum()) for s in pool_scans) * q / pool

    t0 = time.perf_counter()
    br = breakdown_for_window(zm, scans, frags, settings)
    t_savings = time.perf_counter() - t0
    cand = np.flatnonzero(br.total > 0)
    t0 = time.perf_counter()
    _, cut, _ = algorithm2_cut(br.total[cand], zm.bytes[cand].astype(float), settings, 64)
    t_cut = time.perf_counter() - t0

    t0 = time.perf_counter()
    if hybrid:  # a planning service imports scikit-learn once; time it apart
        import sklearn.cluster  # noqa: F401
    t_import = time.perf_counter() - t0
    policy = WairPolicy(window=q, max_window=max(q, 10), min_window=min(10, q), hybrid=hybrid)
    ctx = PolicyContext("t", "s", zm, frags, scans, settings, queries_seen=q)
    t0 = time.perf_counter()
    prop = policy.propose(ctx)
    t_propose = time.perf_counter() - t0
    return {"partitions": n, "queries": q, "pool": pool, "hybrid": int(hybrid),
            "boundary_pairs": int(pairs), "candidates": int(cand.size), "cut": cut,
            "selected": len(prop.partitions) if prop else 0,
            "groups": len(prop.groups) if prop else 0,
            "layouts": ";".join(sorted({f"{g.layout}:{'+'.join(g.columns)}" for g in prop.groups})) if prop else "",
            "build_s": round(t_build, 3), "sklearn_import_s": round(t_import, 3), "savings_s": round(t_savings, 3), "cut_s": round(t_cut, 3),
            "propose_s": round(t_propose, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--pool", type=int, default=200, help="distinct query scans shared by the window")
    ap.add_argument("--width", type=float, default=0.02, help="partition range width on a and b")
    ap.add_argument("--qwidth", type=float, default=0.02, help="query range width")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="10,000 partitions x 1,000 queries")
    ap.add_argument("--no-hybrid", action="store_true", help="FK: one key, no signatures/DBSCAN")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.partitions, args.queries = 10_000, 1_000
    hybrid = not args.no_hybrid and importlib.util.find_spec("engine.layout.signatures") is not None
    row = run(args.partitions, args.queries, min(args.pool, args.queries), args.width,
              args.qwidth, args.seed, hybrid)
    for k, v in row.items():
        print(f"{k:>15}: {v}")
    goal = "MET" if row["propose_s"] < 10 else "MISSED"
    print(f"planning {row['partitions']:,} partitions x {row['queries']:,} queries: "
          f"{row['propose_s']:.2f} s (goal < 10 s: {goal})")
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        new = not RESULTS.exists()
        with RESULTS.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)


if __name__ == "__main__":
    main()
