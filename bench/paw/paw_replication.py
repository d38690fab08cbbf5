"""PAW replication (seed 001, PAW_PTO.md §5 goals G1-G9): logical and physical cost of PAW
against the greedy Qd-tree, the k-d tree and the lower bounds, on generated data.

    PYTHONPATH=. python bench/paw/paw_replication.py --quick      # 200k x 8-D, seeds 0-3
    PYTHONPATH=. python bench/paw/paw_replication.py --full       # 1M rows (G9 at full size)

Defaults (PAW Table III, PAW_PTO.md §1): 50 history + 50 future queries over the first 4
dimensions, side lengths U(0, γ·len] with γ = 10%, δ = 1%, b_min = 0.167% of the rows.
Costs are mean rows read per future query (eq. 2 / |Q_F|). Results go to
bench/paw/results.csv (one table per section); the write-up is bench/paw/README.md.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from typing import Callable

import numpy as np

from engine.design.paw import DBox, PawTree
from engine.design.paw.baselines import kd_tree, lower_bounds, qdtree, qdtree_cost
from engine.design.paw.descriptors import PreciseDescriptors, str_order
from engine.design.paw.similarity import perturb
from engine.design.paw.tuner import tune_storage

GAMMA, QDIMS, NQ = 0.10, 4, 50
#: b_min as a share of |D| (PAW_PTO.md §1: 128 MB of TPC-H's 75 GB); ``--b-share`` changes it
#: for the precise-descriptor section (OSM's 100M 2-D points are a few GB, so 128 MB blocks
#: are a few % of OSM's rows: see bench/paw/README.md, G6)
B_SHARE = 0.00167
#: b_min of the OSM stand-in for G6 (Figs. 23a/25a): the same rule as B_SHARE, one 128 MB block
#: over the dataset, applied to OSM instead of TPC-H. §VI gives OSM as 100M records of 2
#: numerical attributes, 100M x 2 x 8 bytes = 1.6 GB, so 128 MB / 1.6 GB = 8% (the spec's 0.167%
#: is TPC-H's 128 MB / 75 GB; PAW_PTO.md gives no OSM size). ``--precise-b-shares`` runs others
#: (the spec's 0.167% is reported beside it by default)
OSM_B_SHARE = 128e6 / (100e6 * 2 * 8)
PRECISE_B_SHARES = (OSM_B_SHARE, B_SHARE)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.csv")


# -- generators (Table III, decided in PAW_PTO.md §1) -------------------------------------
def uniform_queries(rng: np.random.Generator, d: int, qdims: int, n: int, gamma: float = GAMMA) -> list[DBox]:
    out = []
    for _ in range(n):
        lo, hi = np.full(d, -np.inf), np.full(d, np.inf)
        w = rng.uniform(0, gamma, qdims)
        lo[:qdims] = rng.uniform(0, 1 - w)
        hi[:qdims] = lo[:qdims] + w
        out.append(DBox.closed(lo, hi))
    return out


#: the skewed generator's readings (G5 depends on them, see bench/paw/README.md): ``shape`` "query"
#: draws every query's side lengths U(0, γ] around a centre ~ N(C_k, σ) (PAW_PTO.md §1, the
#: default); "cluster" is a Gaussian mixture over the query *bounds* (the paper's "Gaussian
#: mixture model"): each centre has its own side lengths and every bound ~ N(·, σ).
#: ``assign`` "cycle" gives query i the centre i mod C; "halves" gives both halves of Q_H
#: (the two sides of PAW-unknown's δ′, §IV-E) the same number of queries per centre.
SKEW_SHAPES, SKEW_ASSIGN = ("query", "cluster"), ("cycle", "halves")


def skewed_queries(rng: np.random.Generator, d: int, qdims: int, n: int, centers: int = 10,
                   shape: str = "query", assign: str = "cycle", gamma: float = GAMMA,
                   sigma_share: float = 0.1) -> list[DBox]:
    """Table III's skewed generator: ``centers`` centres, σ = ``sigma_share``·γ."""
    c = rng.uniform(gamma, 1 - gamma, (centers, qdims))
    widths = rng.uniform(0, gamma, (centers, qdims))
    sigma = sigma_share * gamma
    out = []
    for i in range(n):
        k = (i % max(1, n // 2)) % centers if assign == "halves" else i % centers
        if shape == "cluster":
            a = c[k] - widths[k] / 2 + rng.normal(0, sigma, qdims)
            b = c[k] + widths[k] / 2 + rng.normal(0, sigma, qdims)
            a, b = np.clip(np.minimum(a, b), 0, 1), np.clip(np.maximum(a, b), 0, 1)
        else:
            mid = np.clip(c[k] + rng.normal(0, sigma, qdims), 0, 1)
            w = rng.uniform(0, gamma, qdims)
            a, b = mid - w / 2, mid + w / 2
        lo, hi = np.full(d, -np.inf), np.full(d, np.inf)
        lo[:qdims], hi[:qdims] = a, b
        out.append(DBox.closed(lo, hi))
    return out


class Case:
    """Data, columns, history and future workloads of one run.

    ``data`` "uniform" (the TPC-H lineitem stand-in: the paper finds its 8 numeric columns
    uniform) or "osm" (the 2-D skewed OSM stand-in of :func:`skewed_points`; ``d`` and
    ``qdims`` become 2). ``nq`` history queries (Table III: 50 of the 100), ``gamma`` the
    maximal query range, ``centers`` / ``sigma_share`` the skewed generator's parameters
    (Figs. 16-21 vary them)."""

    def __init__(self, n: int, d: int, seed: int, delta: float, skewed: bool = False,
                 random_future: float = 0.0, qdims: int = QDIMS, shape: str = "query",
                 assign: str = "cycle", data: str = "uniform", nq: int = NQ, gamma: float = GAMMA,
                 centers: int = 10, sigma_share: float = 0.1) -> None:
        rng = np.random.default_rng(seed)
        if data == "osm":
            d = qdims = 2
            self.x = skewed_points(rng, n, "osm")
        else:
            self.x = rng.uniform(0, 1, (n, d))
        self.cols = [f"a{j}" for j in range(d)]
        self.data = {c: self.x[:, j] for j, c in enumerate(self.cols)}
        self.history = (skewed_queries(rng, d, qdims, nq, centers=centers, shape=shape, assign=assign,
                                       gamma=gamma, sigma_share=sigma_share) if skewed
                        else uniform_queries(rng, d, qdims, nq, gamma=gamma))
        domain = (np.zeros(d), np.ones(d))
        self.future = perturb(self.history, delta, domain, rng)
        k = int(round(random_future * nq))
        if k:
            self.future[:k] = uniform_queries(rng, d, qdims, k, gamma=gamma)
        self.b = max(1, int(round(n * B_SHARE)))
        self.delta = delta

    def bounds(self, qs: list[DBox]) -> list[dict]:
        return [q.to_bounds(self.cols) for q in qs]


def mean_cost(cost: Callable[[list], float], qs: list) -> float:
    return cost(qs) / max(1, len(qs))


def file_mbrs(x: np.ndarray, leaf: np.ndarray, b: int, cols: list[str],
              n_groups: int = 1, order: str = "str") -> tuple[np.ndarray, ...]:
    """Physical files: each leaf cut by a k-d tree into files of < 2·b rows; their min/max.
    With ``n_groups`` > 1, each file's rows are written as that many row groups, in STR order
    (``order="str"``: PAW §V-A's physical analogue of precise descriptors) or in the first
    column's order (``"first"``: the same row-group granularity without STR, the control),
    and the row groups are returned."""
    lo, hi, rows = [], [], []
    for lf in np.unique(leaf):
        part = x[leaf == lf]
        if len(part) >= 2 * b:
            sub = kd_tree({c: part[:, j] for j, c in enumerate(cols)}, b, cols).leaf_of(
                {c: part[:, j] for j, c in enumerate(cols)})
        else:
            sub = np.zeros(len(part), dtype=np.int64)
        for s in np.unique(sub):
            f = part[sub == s]
            tiles = (str_order(f, n_groups) if order == "str" else
                     np.array_split(np.argsort(f[:, 0], kind="stable"), min(n_groups, len(f))))
            for tile in tiles:
                g = f[tile]
                lo.append(g.min(axis=0)), hi.append(g.max(axis=0)), rows.append(len(g))
    return np.array(lo), np.array(hi), np.array(rows, dtype=np.float64)


def physical_cost(files: tuple[np.ndarray, ...], qs: list[DBox]) -> float:
    """Mean rows of the files whose min/max box meets each query (zonemap pruning only)."""
    lo, hi, rows = files
    total = 0.0
    for q in qs:
        meets = np.all((lo <= q.hi) & (hi >= q.lo), axis=1)
        total += rows[meets].sum()
    return total / len(qs)


# -- experiments ---------------------------------------------------------------------------
def logical_run(n: int, d: int, seed: int, delta: float, psi: str = "text", alpha: float = 3.0,
                physical: bool = False, **kw) -> dict:
    c = Case(n, d, seed, delta, **kw)
    t0 = time.perf_counter()
    paw = PawTree(b_min=c.b, delta=delta, psi=psi, alpha=alpha, columns=c.cols).fit(c.data, c.bounds(c.history))
    t_paw = time.perf_counter() - t0
    t0 = time.perf_counter()
    qd = qdtree(c.data, c.bounds(c.history), c.b, c.cols)
    t_qd = time.perf_counter() - t0
    kd = kd_tree(c.data, c.b, c.cols)
    lb, lb_b = lower_bounds(c.x, c.future, c.b)
    row = {"n": n, "d": d, "seed": seed, "delta": delta, "psi": psi, "alpha": alpha,
           "paw": mean_cost(paw.cost, c.future), "qd": mean_cost(lambda q: qdtree_cost(qd, q), c.bounds(c.future)),
           "kd": mean_cost(kd.cost, c.future), "lb_b": lb_b / len(c.future), "lb": lb / len(c.future),
           "paw_build_s": t_paw, "qd_build_s": t_qd, "paw_leaves": paw.n_leaves_, "qd_leaves": qd.n_leaves_,
           "ip_share": sum(lf.rows for lf in paw.leaves_ if lf.irregular) / n, **kw}
    if physical:
        row["paw_phys"] = physical_cost(file_mbrs(c.x, paw.leaf_of(c.data), c.b, c.cols), c.future)
        row["qd_phys"] = physical_cost(file_mbrs(c.x, qd.leaf_of(c.data), c.b, c.cols), c.future)
    return row


def unknown_run(n: int, d: int, seed: int, skewed: bool, shape: str = "query", assign: str = "cycle") -> dict:
    """PAW given δ against PAW-unknown: δ′ by the paper's matching ("auto") and by the
    one-sided nearest distance ("auto-nearest", our departure), both with refinement."""
    c = Case(n, d, seed, 0.01, skewed=skewed, shape=shape, assign=assign)
    known = PawTree(b_min=c.b, delta=0.01, columns=c.cols).fit(c.data, c.bounds(c.history))
    row = {"seed": seed, "skewed": skewed, "shape": shape if skewed else "-", "assign": assign if skewed else "-",
           "paw": mean_cost(known.cost, c.future)}
    for key, delta in (("unknown", "auto"), ("nearest", "auto-nearest")):
        auto = PawTree(b_min=c.b, delta=delta, refine=True, columns=c.cols).fit(c.data, c.bounds(c.history))
        row[f"paw_{key}"], row[f"delta_{key}"] = mean_cost(auto.cost, c.future), auto.delta_
    return row


def random_run(n: int, d: int, seed: int, share: float) -> dict:
    c = Case(n, d, seed, 0.01, random_future=share)
    paw = PawTree(b_min=c.b, delta=0.01, refine=True, columns=c.cols).fit(c.data, c.bounds(c.history))
    kd = kd_tree(c.data, c.b, c.cols)
    return {"seed": seed, "random": share, "paw": mean_cost(paw.cost, c.future), "kd": mean_cost(kd.cost, c.future)}


PRECISE_DATA = ("clusters", "osm")


def skewed_points(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """2-D stand-ins for OSM (decision 10): "clusters", 20 Gaussian clusters (σ = 0.03);
    "osm", 50 cities of heavy-tailed weight and σ ~ U(0.002, 0.02) (70% of the points)
    plus 15 roads (points along segments, jitter 0.001): large empty regions, as on a map."""
    if kind == "clusters":
        centers = rng.uniform(0.1, 0.9, (20, 2))
        return np.clip(centers[rng.integers(0, 20, n)] + rng.normal(0, 0.03, (n, 2)), 0, 1)
    k, m = 50, int(n * 0.7)
    centers, sig = rng.uniform(0.05, 0.95, (k, 2)), rng.uniform(0.002, 0.02, k)
    weight = rng.pareto(1.2, k) + 0.1
    lab = rng.choice(k, m, p=weight / weight.sum())
    city = centers[lab] + rng.normal(0, 1, (m, 2)) * sig[lab, None]
    a, b = rng.uniform(0.05, 0.95, (15, 2)), rng.uniform(0.05, 0.95, (15, 2))
    seg, t = rng.integers(0, 15, n - m), rng.uniform(0, 1, (n - m, 1))
    road = a[seg] + t * (b[seg] - a[seg]) + rng.normal(0, 0.001, (n - m, 2))
    return np.clip(np.vstack([city, road]), 0, 1)


PRECISE_WORKLOADS = ("uniform", "skewed")
PRECISE_METHODS = ("paw", "kd", "qd")


def precise_run(n: int, seed: int, kind: str = "osm", workload: str = "uniform", delta: float = 0.01,
                b_share: float | None = None) -> dict:
    """Fig. 23a (δ = 1%) / Fig. 25a (δ = 0): skewed 2-D points (an OSM stand-in), 2-D queries
    of Table III's ``workload`` generator; every method's logical cost with its tree's
    descriptors only ("off", the paper's default: plugins disabled) and with N_mbr STR MBRs
    per leaf; for PAW also the physical analogue (each file's rows in STR order as N row
    groups; a row group is read iff its min/max meets the query) and its control (as many
    row groups in the first column's order)."""
    rng = np.random.default_rng(seed)
    x = skewed_points(rng, n, kind)
    cols = ["lon", "lat"]
    data = {"lon": x[:, 0], "lat": x[:, 1]}
    hist = skewed_queries(rng, 2, 2, NQ) if workload == "skewed" else uniform_queries(rng, 2, 2, NQ)
    future = perturb(hist, delta, (np.zeros(2), np.ones(2)), rng)
    b_share = B_SHARE if b_share is None else b_share
    b = max(1, int(round(n * b_share)))
    bounds = [q.to_bounds(cols) for q in hist]
    trees = {"paw": PawTree(b_min=b, delta=delta, columns=cols).fit(data, bounds),
             "kd": kd_tree(data, b, cols), "qd": qdtree(data, bounds, b, cols)}
    lb, lb_b = lower_bounds(x, future, b)
    row = {"seed": seed, "data": kind, "workload": workload, "delta": delta, "b_share": b_share,
           "lb": lb / NQ, "lb_b": lb_b / NQ,
           "empty_queries": float(np.mean([not q.contains(x).any() for q in future]))}
    for name, tree in trees.items():
        rows = np.array([lf.rows for lf in tree.leaves_], dtype=np.float64)
        hits = [tree.leaves_for(q) if name != "qd" else tree.leaves_for(q.to_bounds(cols)) for q in future]
        row[f"{name}_off"] = float(sum(rows[h].sum() for h in hits)) / NQ
        for k in (1, 2, 3, 5):
            row[f"{name}_nmbr{k}"] = PreciseDescriptors(tree, data, k).cost(future) / NQ
    leaf = trees["paw"].leaf_of(data)
    row.update({f"rg{k}": physical_cost(file_mbrs(x, leaf, b, cols, n_groups=k), future) for k in (1, 3, 5)})
    row["rg3_first"] = physical_cost(file_mbrs(x, leaf, b, cols, n_groups=3, order="first"), future)
    return row


def tuner_run(n: int, d: int, seed: int, delta: float) -> dict:
    c = Case(n, d, seed, delta)
    paw = PawTree(b_min=c.b, delta=delta, columns=c.cols).fit(c.data, c.bounds(c.history))
    costs = np.array([paw.query_cost(q) for q in paw.extended_])
    row = {"seed": seed, "delta": delta}
    for budget in (0.0, 0.05, 0.1, 0.2, 0.4, 1.0):
        t = tune_storage(c.x, paw.extended_, costs, c.b, int(budget * n))
        row[f"b{int(budget * 100)}"] = float(np.mean([t.query_cost(q, paw.query_cost(q)) for q in c.future]))
    row["lb_b"] = lower_bounds(c.x, c.future, c.b)[1] / NQ
    return row


def write_csv(name: str, rows: list[dict]) -> None:
    """Table ``name`` of bench/paw/results.csv (:func:`write_table`)."""
    write_table(RESULTS, name, rows)


def write_table(path: str, name: str, rows: list[dict]) -> None:
    """Write ``rows`` as table ``name`` of the folder's one results file: its rows replace
    that table's rows from an earlier run, the other tables' rows stay (a ``table`` column
    tells them apart; each table has its own columns)."""
    kept: list[dict] = []
    if os.path.exists(path):
        with open(path, newline="") as fh:
            kept = [r for r in csv.DictReader(fh) if r.get("table") != name]
    rows = kept + [{"table": name, **r} for r in rows]
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def med(rows: list[dict], f: Callable[[dict], float]) -> float:
    return statistics.median(f(r) for r in rows)


def section_sweep(n: int, d: int, seeds: range) -> list[dict]:
    """G1-G4: the δ sweep (logical and physical), 2 query dimensions."""
    sweep = [logical_run(n, d, s, delta, physical=delta in (0.0, 0.01)) for delta in (0.0, 0.005, 0.01, 0.02, 0.05)
             for s in seeds]
    write_csv("sweep", sweep)
    print("G1/G2/G3 sweep (mean rows per future query, median over seeds):")
    for delta in (0.0, 0.005, 0.01, 0.02, 0.05):
        rs = [r for r in sweep if r["delta"] == delta]
        print(f"  δ={delta:.3f}: PAW {med(rs, lambda r: r['paw']):8.0f}  Qd {med(rs, lambda r: r['qd']):8.0f}  "
              f"kd {med(rs, lambda r: r['kd']):8.0f}  LB_b {med(rs, lambda r: r['lb_b']):6.0f}  "
              f"LB {med(rs, lambda r: r['lb']):6.1f}  Qd/PAW min {min(r['qd'] / r['paw'] for r in rs):5.2f} "
              f"mean {statistics.mean(r['qd'] / r['paw'] for r in rs):5.2f}  PAW/LB_b {med(rs, lambda r: r['paw'] / r['lb_b']):4.2f}  "
              f"kd/PAW {med(rs, lambda r: r['kd'] / r['paw']):5.1f}  IP share {med(rs, lambda r: r['ip_share']):.2f}")
        if "paw_phys" in rs[0]:
            print(f"           physical: PAW {med(rs, lambda r: r['paw_phys']):8.0f}  Qd {med(rs, lambda r: r['qd_phys']):8.0f}"
                  f"  PAW/Qd {med(rs, lambda r: r['paw_phys'] / r['qd_phys']):.2f}")
    two = [logical_run(n, d, s, 0.01, qdims=2) for s in seeds]
    print(f"  2 query dims, δ=1%: PAW/LB_b {med(two, lambda r: r['paw'] / r['lb_b']):.2f}, "
          f"Qd/PAW {med(two, lambda r: r['qd'] / r['paw']):.2f}")
    return sweep


def section_psi(n: int, d: int, seeds: range) -> None:
    """Ψ readings × α (decision 1)."""
    psi_rows = [logical_run(n, d, 0, 0.01, psi=psi, alpha=a) for psi in ("text", "printed") for a in (2, 3, 5, 10)]
    write_csv("psi", psi_rows)
    print("Ψ readings, δ=1%, seed 0 (rows/query, build s, IP share):")
    for r in psi_rows:
        print(f"  {r['psi']:7s} α={r['alpha']:>4}: {r['paw']:7.0f}  {r['paw_build_s']:6.1f} s  {r['ip_share']:.2f}")


def section_unknown(n: int, d: int, seeds: range) -> None:
    """G5: PAW-unknown (δ′, §IV-E) on uniform and skewed readings."""
    variants = [(False, "query", "cycle"), (True, "query", "cycle"), (True, "query", "halves"),
                (True, "cluster", "cycle"), (True, "cluster", "halves")]
    unk = [unknown_run(n, d, s, sk, shape, assign) for sk, shape, assign in variants for s in seeds]
    write_csv("unknown", unk)
    for sk, shape, assign in variants:
        rs = [r for r in unk if r["skewed"] == sk and (not sk or (r["shape"], r["assign"]) == (shape, assign))]
        name = f"skewed ({shape} shapes, {assign})" if sk else "uniform"
        print(f"G5 PAW-unknown {name}: unknown/PAW {med(rs, lambda r: r['paw_unknown'] / r['paw']):.2f}"
              f" (δ′ median {med(rs, lambda r: r['delta_unknown']):.3f}); with auto-nearest "
              f"{med(rs, lambda r: r['paw_nearest'] / r['paw']):.2f} (δ median {med(rs, lambda r: r['delta_nearest']):.3f})")


def section_precise(n: int, d: int, seeds: range) -> None:
    """G6 / Figs. 23a, 25a: precise descriptors on every method, logical and physical, at each
    b_min share of :data:`PRECISE_B_SHARES` (OSM's block ratio first, the spec's 0.167% beside)."""
    pre = []
    for share in PRECISE_B_SHARES:
        for delta in (0.01, 0.0):
            for data in PRECISE_DATA:
                for wl in PRECISE_WORKLOADS:
                    for s in seeds:
                        pre.append(precise_run(n, s, data, wl, delta, b_share=share))
                        print(f"  precise b_min {share:.3%} δ={delta} {data} {wl} seed {s}: PAW off "
                              f"{pre[-1]['paw_off']:.0f} N_mbr 1 {pre[-1]['paw_nmbr1']:.0f} "
                              f"3 {pre[-1]['paw_nmbr3']:.0f}", flush=True)
    write_csv("precise", pre)
    for share in PRECISE_B_SHARES:
        print(f"== b_min = {share:.3%} of the rows" + (" (OSM's 128 MB / 1.6 GB: the G6 gate)" if share == OSM_B_SHARE
                                                       else " (PAW_PTO.md's TPC-H ratio)" if share == B_SHARE else ""))
        _precise_report([r for r in pre if r["b_share"] == share])
    for share in PRECISE_B_SHARES:
        rs = [r for r in pre if (r["b_share"], r["data"], r["workload"]) == (share, "osm", "uniform")]
        parts = []
        for delta in (0.01, 0.0):
            sub = [r for r in rs if r["delta"] == delta]
            parts.append(f"δ={delta}: 3 vs 1 {100 * (med(sub, lambda r: r['paw_nmbr3'] / r['paw_nmbr1']) - 1):+.1f}%, "
                         f"3 vs off {100 * (med(sub, lambda r: r['paw_nmbr3'] / r['paw_off']) - 1):+.1f}%")
        print(f"G6 PAW, osm, uniform queries, b_min {share:.3%}: " + "; ".join(parts))


def _precise_report(pre: list[dict]) -> None:
    for delta in (0.01, 0.0):
        for data in PRECISE_DATA:
            for wl in PRECISE_WORKLOADS:
                rs = [r for r in pre if (r["delta"], r["data"], r["workload"]) == (delta, data, wl)]
                print(f"G6 precise δ={delta} {data} {wl} queries (empty {med(rs, lambda r: r['empty_queries']):.2f}, "
                      f"LB_b {med(rs, lambda r: r['lb_b']):.0f}):")
                for m in PRECISE_METHODS:
                    print(f"  {m:3s} off / N_mbr 1/2/3/5 = "
                          + " / ".join(f"{med(rs, lambda r, k=k: r[f'{m}_{k}']):.0f}"
                                       for k in ("off", "nmbr1", "nmbr2", "nmbr3", "nmbr5"))
                          + f"; 3 vs off {100 * (1 - med(rs, lambda r: r[f'{m}_nmbr3'] / r[f'{m}_off'])):.1f}% less, "
                          f"3 vs 1 {100 * (1 - med(rs, lambda r: r[f'{m}_nmbr3'] / r[f'{m}_nmbr1'])):.1f}% less")
                print("  PAW physical (STR order, N row groups per file) 1/3/5 = "
                      + " / ".join(f"{med(rs, lambda r, k=k: r[f'rg{k}']):.0f}" for k in (1, 3, 5))
                      + f"; 3 row groups in first-column order (control) {med(rs, lambda r: r['rg3_first']):.0f}")


def section_tuner(n: int, d: int, seeds: range) -> None:
    """G7: the storage tuner."""
    tun = [tuner_run(n, d, s, delta) for delta in (0.0, 0.01) for s in seeds]
    write_csv("tuner", tun)
    for delta in (0.0, 0.01):
        rs = [r for r in tun if r["delta"] == delta]
        steps = [med(rs, lambda r, k=k: r[f"b{k}"]) for k in (0, 5, 10, 20, 40, 100)]
        print(f"G7 storage tuner δ={delta}: budget 0/5/10/20/40/100% -> " + " / ".join(f"{v:.0f}" for v in steps)
              + f"; LB_b {med(rs, lambda r: r['lb_b']):.0f}; +20%: {100 * (1 - steps[3] / steps[0]):.1f}% less")


def section_random(n: int, d: int, seeds: range) -> None:
    """G8: random future queries with refinement."""
    rnd = [random_run(n, d, s, share) for share in (0.0, 0.5, 1.0) for s in seeds]
    write_csv("random", rnd)
    for share in (0.0, 0.5, 1.0):
        rs = [r for r in rnd if r["random"] == share]
        print(f"G8 random future {int(share * 100)}%: PAW/kd {med(rs, lambda r: r['paw'] / r['kd']):.2f}")


def section_build(n: int, d: int, seeds: range, sweep: list[dict]) -> None:
    """G9: build times (from the sweep)."""
    build = [r for r in sweep if r["delta"] == 0.01]
    print(f"G9 build at {n} x {d} x {NQ}: PAW {med(build, lambda r: r['paw_build_s']):.1f} s, "
          f"Qd {med(build, lambda r: r['qd_build_s']):.1f} s, ratio {med(build, lambda r: r['paw_build_s'] / r['qd_build_s']):.1f}")


#: the Fig. 16-21 (δ = 1%) and Fig. 24 (δ = 0) sweeps: figure -> (parameter, values, datasets,
#: fixed settings); "tpch" is the uniform 8-D stand-in, "osm" the 2-D skewed one (decision 10)
FIGURES = {
    "16": ("qdims", (1, 2, 3, 4, 6, 8), ("uniform",), {}),
    "17": ("gamma", (0.01, 0.05, 0.10, 0.15, 0.20), ("uniform", "osm"), {}),
    "18": ("nq", (25, 50, 100, 200), ("uniform", "osm"), {}),
    "19": ("delta", (0.0, 0.005, 0.01, 0.02, 0.05), ("osm",), {}),
    "20": ("skewed", (False, True), ("uniform", "osm"), {}),
    "21a": ("centers", (1, 5, 10, 20, 50), ("uniform",), {"skewed": True}),
    "21b": ("sigma_share", (0.05, 0.1, 0.2, 0.5, 1.0), ("uniform",), {"skewed": True}),
    "24a": ("qdims", (2, 4, 8), ("uniform",), {"delta": 0.0}),
    "24b": ("gamma", (0.05, 0.10, 0.20), ("uniform",), {"delta": 0.0}),
    "24c": ("nq", (25, 50, 200), ("uniform",), {"delta": 0.0}),
    "24d": ("skewed", (False, True), ("uniform",), {"delta": 0.0}),
}


def figure_runs(n: int, d: int, seeds: range, figs: list[str]) -> list[dict]:
    """Every (figure, dataset, value, seed) point of ``figs``: PAW, Qd-tree, k-d, LB_b."""
    rows = []
    for fig in figs:
        param, values, datasets, fixed = FIGURES[fig]
        for data in datasets:
            for v in values:
                settings = {"delta": 0.01, **fixed, param: v}
                delta = settings.pop("delta")
                for s in seeds:
                    r = logical_run(n, d, s, delta, data=data, **settings)
                    rows.append({"fig": fig, "param": param, "value": v, **r})
                    print(f"  fig {fig} {data} {param}={v} seed {s}: PAW {r['paw']:.0f} Qd {r['qd']:.0f} "
                          f"kd {r['kd']:.0f} LB_b {r['lb_b']:.0f}", flush=True)
    return rows


def section_figures(n: int, d: int, seeds: range, figs: list[str] | None = None) -> None:
    """Figs. 16-21 and 24: scan ratios (rows per query / |D|) of PAW, Qd-tree, k-d and LB_b
    per sweep point, median over seeds; G1 (Qd/PAW >= 2 at every δ > 0 point), G2 (PAW/LB_b)."""
    figs = figs or list(FIGURES)
    rows = figure_runs(n, d, seeds, figs)
    write_csv("figures", rows)
    print("Figs. 16-21, 24 (scan ratio %, median over seeds; Qd/PAW min over seeds):")
    for fig in figs:
        param, values, datasets, _ = FIGURES[fig]
        for data in datasets:
            for v in values:
                rs = [r for r in rows if r["fig"] == fig and r.get("data") == data and r["value"] == v]
                print(f"  {fig:>3} {data:7s} {param}={v!s:6s}: PAW {100 * med(rs, lambda r: r['paw']) / n:6.3f}  "
                      f"Qd {100 * med(rs, lambda r: r['qd']) / n:6.3f}  kd {100 * med(rs, lambda r: r['kd']) / n:6.3f}  "
                      f"LB_b {100 * med(rs, lambda r: r['lb_b']) / n:6.3f}  Qd/PAW {min(r['qd'] / r['paw'] for r in rs):5.2f}"
                      f"  PAW/LB_b {med(rs, lambda r: r['paw'] / max(r['lb_b'], 1e-9)):4.2f}")


SECTIONS = ("sweep", "psi", "unknown", "precise", "tuner", "random", "figures")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="1M rows (default: --quick, 200k)")
    ap.add_argument("--rows", type=int, default=0, help="rows of the generated data (overrides --full/--quick)")
    ap.add_argument("--figs", default="", help=f"figures of the 'figures' section (default all): {', '.join(FIGURES)}")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections to run (default all): {', '.join(SECTIONS)}")
    ap.add_argument("--b-share", type=float, default=B_SHARE,
                    help=f"b_min as a share of the rows, every section (default {B_SHARE}: 128 MB of TPC-H's "
                         "75 GB, PAW_PTO.md §1; OSM's 128 MB blocks are a few %% of its rows, see bench/paw/README.md G6)")
    ap.add_argument("--precise-b-shares", type=float, nargs="+", default=None, metavar="S",
                    help=f"b_min shares of the precise section (G6; default {OSM_B_SHARE:.2f}, OSM's 128 MB "
                         f"over 1.6 GB, then {B_SHARE}, the spec's TPC-H ratio)")
    args = ap.parse_args()
    if any(not 0 < v < 0.5 for v in args.precise_b_shares or ()):
        ap.error("--precise-b-shares: each share must be in (0, 0.5)")
    if not 0 < args.b_share < 0.5:
        ap.error(f"--b-share must be in (0, 0.5), got {args.b_share}")
    globals()["B_SHARE"] = args.b_share  # read by Case and precise_run at run time
    if args.precise_b_shares:
        globals()["PRECISE_B_SHARES"] = tuple(args.precise_b_shares)
    elif args.b_share != ap.get_default("b_share"):
        globals()["PRECISE_B_SHARES"] = (args.b_share,)  # the round-5 meaning of --b-share
    n = args.rows or (1_000_000 if args.full else 200_000)
    d, seeds = 8, range(args.seeds)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        ap.error(f"--only: unknown section {unknown[0]!r}; sections are {', '.join(SECTIONS)}")
    sweep = section_sweep(n, d, seeds) if "sweep" in only else []
    figs = [f.strip() for f in args.figs.split(",") if f.strip()]
    bad = sorted(set(figs) - set(FIGURES))
    if bad:
        ap.error(f"--figs: unknown figure {bad[0]!r}; figures are {', '.join(FIGURES)}")
    for name in only:
        if name == "figures":
            section_figures(n, d, seeds, figs)
        elif name != "sweep":
            globals()[f"section_{name}"](n, d, seeds)
    if sweep:
        section_build(n, d, seeds, sweep)


if __name__ == "__main__":
    main()
