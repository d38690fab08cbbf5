"""PAW G10 (PAW_PTO.md §5): a PAW plan run on real files against the simulator's prediction.

    PYTHONPATH=. python bench/paw/paw_real.py [--rows 200000] [--target-rows 1000] [--seed 0]

The product path end to end: a TPC-H-like ``lineitem`` (the simulator's ``tpch`` dataset,
written as Parquet with the payload columns filled as in ``engine.replay``) is ingested
into files of ``target_rows`` rows; a history Q_H of 50 PAW queries (Table III: 4 dimensions,
side lengths U(0, γ] with γ = 10% of each domain) is imported; ``plan create --policy paw``
(δ = 1%, b_min = one file) is approved and run by the Spark executor. Then 50 future queries
Q_F (each bound of each Q_H query moved by U[−δ, δ]) are priced twice with the same pruning
code (:func:`engine.sim.scan.query_cost`, file min/max only):

* **real**: over the written files' zonemaps (Parquet footers);
* **simulated**: the same plan group (the same PAW tree) applied by the simulator
  (:func:`engine.sim.apply.apply_groups`) to an in-memory :class:`SimTable` of the same rows.

The simulator charges rows x a per-column width; the widths are either the scenario's model
(``TPCH_WIDTHS``, as the what-if page uses) or calibrated from the table's files *before* the
rewrite (what a what-if run on this table could know); "written" widths, measured on the files
the plan wrote, are no prediction but isolate the pruning from the width model.

``--n-mbr N`` turns on the precise descriptors (PAW §V-A): the plan asks the executor for N
STR row groups per file, and the real side is also priced with the descriptor-aware check
(decision 9: a file is read iff a query meets one of its row groups' min/max boxes, and only
the row groups met are read; :func:`engine.design.paw.descriptors.row_group_cost`) from the
written files' footers. Results: table ``real_{dims}d[_mbrN]`` of ``bench/paw/results.csv`` and
``bench/paw/README.md`` (G10).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import tempfile
import time

import numpy as np
import pyarrow.parquet as pq

from bench.paw.paw_replication import GAMMA, NQ, RESULTS, write_table
from engine.replay.runner import batch_table
from engine import api
from engine.core.config import load_settings
from engine.core import logical_types
from engine.design.paw import DBox
from engine.design.paw.descriptors import row_group_cost
from engine.design.paw.similarity import perturb
from engine.policy.base import PlanGroup
from engine.scenarios.presets import build_scenario
from engine.sim.apply import apply_groups
from engine.sim.scan import compile_fragment, query_cost, scanned_mask
from engine.sim.table import SimTable
from engine.spark.ingest import create_table
from engine.spark.session import get_spark
from engine.table.store import TableStore

QCOLS = ("l_shipdate", "l_partkey", "l_quantity", "l_extendedprice")  # query dimensions, first --dims
PROJECT = "sum(l_extendedprice), sum(l_discount)"
SECRET = "paw bench secret"
EPOCH = dt.date(1970, 1, 1)


def literal(col: str, ltype: str, value: float, upper: bool) -> str:
    """A SQL literal of the column's type; integers and days rounded outward (a wider query)."""
    v = np.ceil(value) if upper else np.floor(value)
    if ltype == "date":
        return f"DATE '{EPOCH + dt.timedelta(days=int(v))}'"
    if ltype == "int":
        return str(int(v))
    return f"{(np.ceil(value * 100) if upper else np.floor(value * 100)) / 100:.2f}"


def workload_sql(queries: list[DBox], types: dict[str, str], cols: tuple[str, ...]) -> str:
    lines = []
    for i, q in enumerate(queries):
        preds = " AND ".join(f"{c} BETWEEN {literal(c, types[c], q.lo[j], False)} AND "
                             f"{literal(c, types[c], q.hi[j], True)}" for j, c in enumerate(cols))
        lines.append(f"-- ts: 2024-01-01T{i // 60:02d}:{i % 60:02d}:00\n"
                     f"SELECT {PROJECT} FROM lineitem WHERE {preds};")
    return "\n".join(lines) + "\n"


def sql_box(q: DBox, types: dict[str, str], cols: tuple[str, ...]) -> DBox:
    """The box the imported SQL of ``q`` selects: its bounds rounded outward as :func:`literal`
    writes them (whole days and integers, else two decimals)."""
    whole = [types[c] in ("date", "int") for c in cols]
    lo = [np.floor(v) if w else np.floor(v * 100) / 100 for v, w in zip(q.lo, whole)]
    hi = [np.ceil(v) if w else np.ceil(v * 100) / 100 for v, w in zip(q.hi, whole)]
    return DBox.closed(lo, hi)


def paw_queries(rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray, n: int) -> list[DBox]:
    """Table III's uniform generator on the columns' domains."""
    length = hi - lo
    out = []
    for _ in range(n):
        w = rng.uniform(0, GAMMA, len(lo)) * length
        a = lo + rng.uniform(0, 1, len(lo)) * (length - w)
        out.append(DBox.closed(a, a + w))
    return out


def widths_of(zonemaps, names: list[str]) -> dict[str, float]:
    """Compressed bytes per row of each column over a snapshot's files."""
    rows = float(zonemaps.rows.sum())
    return {c: float(zonemaps.columns[c].compressed_bytes.sum()) / rows for c in names if c in zonemaps.columns}


def row_group_boxes(paths: list[str], cols: tuple[str, ...], types: dict[str, str]) -> tuple[np.ndarray, ...]:
    """Every row group's (min, max) over ``cols`` (encoded), its rows and its file's index."""
    lo, hi, rows, file_of = [], [], [], []
    for f, path in enumerate(paths):
        meta = pq.ParquetFile(path).metadata
        names = [meta.schema.column(j).name for j in range(meta.num_columns)]
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            stats = [rg.column(names.index(c)).statistics for c in cols]
            lo.append([logical_types.encode_scalar(types[c], s.min) for c, s in zip(cols, stats)])
            hi.append([logical_types.encode_scalar(types[c], s.max) for c, s in zip(cols, stats)])
            rows.append(rg.num_rows)
            file_of.append(f)
    return np.array(lo, dtype=float), np.array(hi, dtype=float), np.array(rows, dtype=float), np.array(file_of)


def run(rows: int, target_rows: int, seed: int, delta: float, home: str, dims: int = 4, nq: int = NQ,
        n_mbr: int = 0) -> dict:
    settings = load_settings({"home": home, "target_rows": target_rows, "spark_master": "local[2]"})
    spark = get_spark(settings, app_name="paw-real")
    scenario = build_scenario("tpch", rows=rows, seed=seed)
    ds, types = scenario.dataset, dict(scenario.schema.columns)
    src = os.path.join(home, "lineitem.parquet")
    pq.write_table(batch_table(scenario, 0, rows), src)
    t0 = time.perf_counter()
    before = create_table(settings, "lineitem", src, target_rows=target_rows, spark=spark)
    t_ingest = time.perf_counter() - t0

    rng = np.random.default_rng(seed)
    cols = QCOLS[:dims]
    lo = np.array([ds.data[c].min() for c in cols])
    hi = np.array([ds.data[c].max() for c in cols])
    history = paw_queries(rng, lo, hi, nq)
    future = perturb(history, delta, (lo, hi), rng)
    log = os.path.join(home, "history.sql")
    with open(log, "w") as fh:
        fh.write(workload_sql(history, types, cols))
    api.import_workload(settings, "lineitem", log)

    api.add_approver(settings, "root", SECRET, admin=True)
    root = api.authenticate(settings, "root", SECRET)
    t0 = time.perf_counter()
    params = {"delta": delta, "b_min_rows": target_rows, **({"n_mbr": n_mbr} if n_mbr else {})}
    plan = api.create_plan(settings, "lineitem", "paw", params, created_by="designer")
    t_design = time.perf_counter() - t0
    api.approve_plan(settings, plan.id, root, reason="bench G10")
    t0 = time.perf_counter()
    api.run_plan(settings, plan.id, spark=spark, actor=root)
    t_run = time.perf_counter() - t0
    after = TableStore(settings).current_snapshot("lineitem")
    (group,) = plan.groups

    log = os.path.join(home, "future.sql")
    with open(log, "w") as fh:
        fh.write(workload_sql(future, types, cols))
    api.import_workload(settings, "lineitem", log, replace=True)
    frags = api.workload_fragments(settings, "lineitem")
    compiled = [compile_fragment(f, types) for f in frags]

    zm_real = after.zonemaps()
    names = [c for c, _ in scenario.schema.columns]
    calibrated = widths_of(before.zonemaps(), names)
    out = {"rows": rows, "target_rows": target_rows, "seed": seed, "delta": delta, "dims": dims, "queries": len(frags),
           "files_before": len(before.partitions), "files_after": len(after.partitions),
           "leaves": sum("leaf" in n for n in group["layout_params"]["tree"]["nodes"]),
           "ingest_s": t_ingest, "design_s": t_design, "run_s": t_run,
           "predicted_rows_per_query": group["layout_params"]["design"]["costs"]["paw"]["worst_future"]}
    real = [query_cost(zm_real, cf) for cf in compiled]
    out["real_bytes"] = sum(c.bytes for c in real)
    out["real_files"] = sum(c.scanned for c in real)
    out["real_rows"] = sum(float(zm_real.rows[scanned_mask(zm_real, cf)].sum()) for cf in compiled)
    if n_mbr:  # the descriptor-aware check on the written row groups (decision 9)
        rg = row_group_boxes([p.path for p in after.partitions], cols, types)
        priced = [row_group_cost(*rg, q) for q in future]
        out["n_mbr"] = n_mbr
        out["row_groups"] = len(rg[2])
        out["real_rg_files"] = sum(f for f, _ in priced)
        out["real_rg_rows"] = sum(r for _, r in priced)
        as_sql = [row_group_cost(*rg, sql_box(q, types, cols)) for q in future]  # what the product prices
        out["real_rg_files_sql"] = sum(f for f, _ in as_sql)
        out["real_rg_rows_sql"] = sum(r for _, r in as_sql)
        out["predicted_precise_rows_per_query"] = group["layout_params"]["design"]["costs"]["paw_precise"]["worst_future"]
        # the product's own scan analysis (engine.scan.rowgroups, from the store's footers):
        # what `layout-advisor pruning --row-groups` and the policies see, beside file level
        for level, flag in (("files", False), ("rg", True)):
            _, _, scans = api.pruning_scans(settings, "lineitem", row_groups=flag)
            scans = list(scans)
            out[f"product_{level}_bytes"] = sum(sc.bytes_scanned for sc in scans)
            out[f"product_{level}_files"] = sum(sc.scanned_count for sc in scans)
            out[f"product_{level}_rows"] = sum(float((sc.scanned_bytes / np.maximum(sc.read_bytes[sc.index], 1e-300)
                                                      * zm_real.rows[sc.index]).sum()) for sc in scans)
        out["product_rg_read"] = sum(sc.row_groups[0] for sc in scans)
    written = widths_of(zm_real, names)  # not a prediction: isolates pruning from the width model
    for label, widths in (("model", dict(ds.widths)), ("calibrated", calibrated), ("written", written)):
        table = SimTable(ds.schema, ds.data, widths, target_rows)
        old = table.ingest(0, rows)
        sim_group = PlanGroup(tuple(table.path(int(p)) for p in old), "paw", tuple(group["columns"]),
                              layout_params=group["layout_params"])
        apply_groups(table, [sim_group], settings)
        zm_sim, _ = table.zonemaps()
        sim = [query_cost(zm_sim, cf) for cf in compiled]
        out[f"sim_{label}_bytes"] = sum(c.bytes for c in sim)
        out["sim_partitions"] = len(zm_sim)
        out["sim_files"] = sum(c.scanned for c in sim)
        out["sim_rows"] = sum(float(zm_sim.rows[scanned_mask(zm_sim, cf)].sum()) for cf in compiled)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--target-rows", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--delta", type=float, default=0.01)
    ap.add_argument("--dims", type=int, default=4, choices=range(1, len(QCOLS) + 1), help="query dimensions")
    ap.add_argument("--queries", type=int, default=NQ, help="history queries (as many future ones)")
    ap.add_argument("--n-mbr", type=int, default=0, help="STR row groups per file (precise descriptors; 0: off)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="paw-real-") as home:
        r = run(args.rows, args.target_rows, args.seed, args.delta, home, args.dims, args.queries, args.n_mbr)
    suffix = f"_mbr{args.n_mbr}" if args.n_mbr else ""
    write_table(RESULTS, f"real_{args.dims}d{suffix}", [r])
    q = r["queries"]
    print(f"{r['rows']} rows, files {r['files_before']} -> {r['files_after']} (sim {r['sim_partitions']}), "
          f"{r['leaves']} PAW leaves; ingest {r['ingest_s']:.0f} s, design {r['design_s']:.1f} s, run {r['run_s']:.0f} s")
    print(f"per future query ({q}): real files {r['real_files'] / q:.2f} vs sim {r['sim_files'] / q:.2f}; "
          f"rows real {r['real_rows'] / q:.0f} vs sim {r['sim_rows'] / q:.0f} "
          f"(design predicted {r['predicted_rows_per_query']:.0f})")
    if args.n_mbr:
        print(f"descriptor-aware ({r['row_groups']} row groups, {args.n_mbr} STR per file): files "
              f"{r['real_rg_files'] / q:.2f}, rows {r['real_rg_rows'] / q:.0f} per future query "
              f"(design predicted {r['predicted_precise_rows_per_query']:.0f})")
        print(f"the same check on the boxes the imported SQL selects (literals rounded outward): files "
              f"{r['real_rg_files_sql'] / q:.2f}, rows {r['real_rg_rows_sql'] / q:.0f}")
        print(f"product's scan analysis (pruning --row-groups vs --files): row-equivalents (each file's charged share x its rows) {r['product_rg_rows'] / q:.0f} vs "
              f"{r['product_files_rows'] / q:.0f}, files {r['product_rg_files'] / q:.2f} vs "
              f"{r['product_files_files'] / q:.2f}, bytes {r['product_rg_bytes'] / q:.0f} vs "
              f"{r['product_files_bytes'] / q:.0f} per future query ({r['product_rg_bytes'] / r['product_files_bytes'] - 1:+.1%})")
    for label in ("model", "calibrated", "written"):
        print(f"bytes real {r['real_bytes'] / q:.0f} vs sim ({label} widths) {r[f'sim_{label}_bytes'] / q:.0f}: "
              f"real/sim {r['real_bytes'] / r[f'sim_{label}_bytes']:.4f}")


if __name__ == "__main__":
    main()
