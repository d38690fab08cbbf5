"""Layout primitives: Hilbert/Z-order/sort keys per second, DBSCAN kd-tree vs brute cosine, Qd-tree fit.

* **keys**: rows of three columns (a date-like integer column, a log-normal float, a string
  column with 1,000 distinct values) keyed by orderings fitted on a 100,000-row sample, the
  way the executor keys each Arrow batch; plus the raw :func:`hilbert_encode` on ready grid
  coordinates (Skilling's transform alone).
* **dbscan**: :func:`engine.layout.signatures.dbscan_cosine` (unit vectors, euclidean
  eps = sqrt(2 eps_cos) on a kd-tree, merged duplicates) against scikit-learn's
  ``DBSCAN(metric="cosine")`` (brute force) on the same 8-D signatures, with the label
  agreement (exact equality and adjusted Rand index). Two data sets: ``clustered`` (savings
  concentrated on a few anchors with jitter, 2 % uniform noise, 30 % exact duplicates: what
  a window produces) and ``uniform`` (random positive directions: the worst case).
* **qdtree**: greedy Qd-tree fit on a 100,000-row sample with 1,000 query boxes.

Usage::

    .venv/bin/python bench/layout/bench_layout.py --quick     # 1 M keys, 20 k signatures
    .venv/bin/python bench/layout/bench_layout.py --full      # 10 M keys, 100 k signatures (minutes, ~3 GB)
    .venv/bin/python bench/layout/bench_layout.py --keys-rows 10000000 --skip-dbscan

Writes ``bench/layout/results.csv`` and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import time
from pathlib import Path

import numpy as np
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score

from engine.layout import Hilbert, QdTree, SortKey, ZOrder, dbscan_cosine, hilbert_encode, savings_signatures

RESULTS = Path(__file__).parent / "results.csv"
FIELDS = ["when", "bench", "case", "impl", "rows", "dims", "seconds", "rows_per_s", "agreement", "ari", "note"]


def _table(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"ship": rng.integers(8000, 10500, n).astype(np.float64),
            "price": rng.lognormal(8, 1, n),
            "part": np.char.add("P#", rng.integers(0, 1000, n).astype(str))}


def _timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def bench_keys(n: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    data = _table(n, rng)
    sample = {c: a[:100_000] for c, a in data.items()}
    coords = rng.integers(0, 2 ** 16, size=(n, 3), dtype=np.uint64)
    _, sec = _timed(hilbert_encode, coords, 16)
    rows.append(dict(bench="keys", case="grid coords", impl="hilbert_encode (Skilling, numpy)", rows=n, dims=3,
                     seconds=sec, note="16 bits per dimension"))
    for name, ordering, cols in (("Hilbert", Hilbert, ["ship", "price", "part"]),
                                 ("ZOrder", ZOrder, ["ship", "price", "part"]),
                                 ("SortKey", SortKey, ["ship", "price", "part"]),
                                 ("SortKey", SortKey, ["ship"])):
        o = ordering(cols).fit(sample)
        _, sec = _timed(o.keys, data)
        rows.append(dict(bench="keys", case="date+float+string" if len(cols) > 1 else "one numeric column",
                         impl=f"{name}.keys (rank-normalized)" if len(cols) > 1 else f"{name}.keys (value)",
                         rows=n, dims=len(cols), seconds=sec, note="fitted on a 100k-row sample"))
    return rows


def _signatures(n: int, kind: str, rng: np.random.Generator, d: int = 8) -> np.ndarray:
    if kind == "uniform":
        return savings_signatures(rng.random((n, d)))
    centers = np.zeros((6, d))
    centers[0, 0] = centers[1, 1] = 1
    centers[2, [0, 1]] = 1
    centers[3, [0, 2]] = (2, 1)
    centers[4, 2:5] = 1
    centers[5, :6] = 1
    lab = rng.integers(0, len(centers), n)
    x = np.abs(centers[lab] + rng.normal(0, 0.03, (n, d)) * (centers[lab] > 0))
    noise = rng.random(n) < 0.02
    x[noise] = rng.random((noise.sum(), d))
    dup = rng.random(n) < 0.30  # partitions touched by one-column queries only: exactly e_i
    x[dup] = centers[lab[dup]] * (centers[lab[dup]].sum(axis=1, keepdims=True) == 1)
    x[dup & (x.sum(axis=1) == 0)] = centers[0]
    return savings_signatures(x)


def bench_dbscan(n: int, eps: float, min_samples: int, rng: np.random.Generator, brute: bool) -> list[dict]:
    rows = []
    for kind in ("clustered", "uniform"):
        x = _signatures(n, kind, rng)
        ours, sec = _timed(dbscan_cosine, x, eps, min_samples)
        row = dict(bench="dbscan", case=f"{kind} eps={eps} min_samples={min_samples}",
                   impl="dbscan_cosine (kd-tree, merged duplicates)", rows=n, dims=x.shape[1], seconds=sec,
                   note=f"{len(set(ours.tolist()) - {-1})} clusters, {(ours < 0).mean():.1%} noise, "
                        f"{len(np.unique(x, axis=0))} distinct")
        rows.append(row)
        exact, sec_e = _timed(dbscan_cosine, x, eps, min_samples, exact_max_points=10 ** 9)
        rows.append(dict(bench="dbscan", case=row["case"], impl="dbscan_cosine exact (no grid/sample bound)",
                         rows=n, dims=x.shape[1], seconds=sec_e,
                         agreement=float((exact == ours).mean()), ari=adjusted_rand_score(exact, ours)))
        if brute:
            ref, sec_b = _timed(lambda: DBSCAN(eps=eps, min_samples=min_samples, metric="cosine").fit(x).labels_)
            rows.append(dict(bench="dbscan", case=row["case"], impl="sklearn DBSCAN(metric='cosine') brute",
                             rows=n, dims=x.shape[1], seconds=sec_b, note=f"kd-tree speed-up {sec_b / sec:.1f}x"))
            row["agreement"] = float((ours == ref).mean())
            row["ari"] = adjusted_rand_score(ref, ours)
            rows[-2]["agreement"] = float((exact == ref).mean())
            rows[-2]["ari"] = adjusted_rand_score(ref, exact)
    return rows


def bench_qdtree(rng: np.random.Generator, n: int = 100_000, n_queries: int = 1000) -> list[dict]:
    data = _table(n, rng)
    queries = []
    for i in range(n_queries):
        lo = float(rng.integers(8000, 10400))
        box = {"ship": (lo, lo + float(rng.integers(7, 90)), True, True)}
        if i % 3 == 0:
            p = float(rng.lognormal(8, 1))
            box["price"] = (p, p * 1.5, True, False)
        if i % 7 == 0:
            box["part"] = (f"P#{rng.integers(0, 900)}", None, True, True)
        queries.append(box)
    t, sec = _timed(lambda: QdTree(min_leaf_rows=n // 200).fit(data, queries=queries))
    return [dict(bench="qdtree", case=f"{n_queries} query boxes, 3 columns", impl="QdTree.fit (greedy)",
                 rows=n, dims=3, seconds=sec, note=f"{t.n_leaves_} leaves, min_leaf_rows={n // 200}")]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="1 M keys, 20 k signatures (the default sizes)")
    p.add_argument("--full", action="store_true", help="10 M keys, 100 k signatures")
    p.add_argument("--keys-rows", type=int, default=None)
    p.add_argument("--dbscan-points", type=int, default=None)
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--min-samples", type=int, default=5)
    p.add_argument("--no-brute", action="store_true", help="skip scikit-learn's brute-force cosine DBSCAN")
    p.add_argument("--skip-keys", action="store_true")
    p.add_argument("--skip-dbscan", action="store_true")
    p.add_argument("--skip-qdtree", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    keys_rows = args.keys_rows or (10_000_000 if args.full else 1_000_000)
    points = args.dbscan_points or (100_000 if args.full else 20_000)
    rng = np.random.default_rng(args.seed)
    rows: list[dict] = []
    if not args.skip_keys:
        rows += bench_keys(keys_rows, rng)
    if not args.skip_dbscan:
        rows += bench_dbscan(points, args.eps, args.min_samples, rng, brute=not args.no_brute)
    if not args.skip_qdtree:
        rows += bench_qdtree(rng)
    when = dt.datetime.now().isoformat(timespec="seconds")
    for r in rows:
        r["when"] = when
        r["rows_per_s"] = r["rows"] / r["seconds"] if r["seconds"] >= 1e-3 else ""
        for k in ("seconds", "rows_per_s", "agreement", "ari"):
            if isinstance(r.get(k), float):
                r[k] = round(r[k], 4 if k in ("agreement", "ari") else 3)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows({k: r.get(k, "") for k in FIELDS} for r in rows)
    for r in rows:
        print(f"{r['bench']:7} {r['impl'][:46]:46} {r['case'][:34]:34} n={r['rows']:>9,} "
              f"{r['seconds']:>8.3f}s  {r.get('agreement', '')!s:>7} {r.get('ari', '')!s:>7}  {r.get('note', '')}")
    print(f"appended {len(rows)} rows to {RESULTS}")


if __name__ == "__main__":
    main()
