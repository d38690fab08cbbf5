"""G1's missed points of Figs. 16-19, checked (bench/paw/README.md, "the 4 points where G1 is
missed"): Qd/PAW beside its ceiling Qd/LB_b (no layout obeying b_min reads less than LB_b), at the
spec's b_min and at OSM's block ratio; PAW with its §IV-E refinement; and Fig. 19's δ points on the
worst-case workload Q_F* that PAW minimises (Lemma 1) beside the future queries Q_F.

    PYTHONPATH=. python bench/paw/paw_g1_misses.py --rows 100000 --seeds 2
"""

from __future__ import annotations

import argparse
import statistics

from bench.paw import paw_replication as pr
from engine.design.paw import PawTree
from engine.design.paw.baselines import kd_tree, qdtree, qdtree_cost

POINTS = (("16", "uniform", {"qdims": 1}, 0.01), ("17", "osm", {"gamma": 0.2}, 0.01),
          ("18", "osm", {"nq": 200}, 0.01), ("19", "osm", {}, 0.05))


def point(n: int, seed: int, data: str, kw: dict, delta: float, refine: bool) -> dict:
    c = pr.Case(n, 8, seed, delta, data=data, **kw)
    paw = PawTree(b_min=c.b, delta=delta, columns=c.cols).fit(c.data, c.bounds(c.history))
    qd = qdtree(c.data, c.bounds(c.history), c.b, c.cols)
    kd = kd_tree(c.data, c.b, c.cols)
    star = paw.extended_
    row = {"paw": pr.mean_cost(paw.cost, c.future), "kd": pr.mean_cost(kd.cost, c.future),
           "qd": pr.mean_cost(lambda q: qdtree_cost(qd, q), c.bounds(c.future)),
           "lb_b": pr.lower_bounds(c.x, c.future, c.b)[1] / len(c.future),
           "paw_star": pr.mean_cost(paw.cost, star), "kd_star": pr.mean_cost(kd.cost, star),
           "qd_star": pr.mean_cost(lambda q: qdtree_cost(qd, q), c.bounds(star))}
    if refine:
        ref = PawTree(b_min=c.b, delta=delta, refine=True, columns=c.cols).fit(c.data, c.bounds(c.history))
        row["ref"] = pr.mean_cost(ref.cost, c.future)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    spec = pr.B_SHARE
    for share in (spec, pr.OSM_B_SHARE):
        for fig, data, kw, delta in POINTS:
            if data == "uniform" and share != spec:
                continue
            pr.B_SHARE = share
            try:
                rs = [point(args.rows, s, data, kw, delta, refine=data == "osm" and share == spec)
                      for s in range(args.seeds)]
            finally:
                pr.B_SHARE = spec
            m = lambda f: statistics.mean(f(r) for r in rs)  # noqa: E731
            line = (f"fig {fig} {data} {kw or ''} δ={delta} b_min {share:.3%}: Qd/PAW {m(lambda r: r['qd'] / r['paw']):.2f}, "
                    f"ceiling Qd/LB_b {m(lambda r: r['qd'] / r['lb_b']):.2f}, PAW/LB_b {m(lambda r: r['paw'] / r['lb_b']):.2f}, "
                    f"kd/PAW {m(lambda r: r['kd'] / r['paw']):.2f}")
            if "ref" in rs[0]:
                line += (f"; refined: Qd/PAW {m(lambda r: r['qd'] / r['ref']):.2f}, PAW/LB_b {m(lambda r: r['ref'] / r['lb_b']):.2f}, "
                         f"kd/PAW {m(lambda r: r['kd'] / r['ref']):.2f}")
            print(line, flush=True)
    for delta in (0.02, 0.05):  # Fig. 19 on Q_F and on Q_F*
        rs = [point(args.rows, s, "osm", {}, delta, refine=True) for s in range(args.seeds)]
        md = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
        print(f"fig 19 osm δ={delta}: Q_F: PAW {md('paw'):.0f} (refined {md('ref'):.0f}) k-d {md('kd'):.0f} "
              f"Qd {md('qd'):.0f}; Q_F*: PAW {md('paw_star'):.0f} k-d {md('kd_star'):.0f} Qd {md('qd_star'):.0f}", flush=True)


if __name__ == "__main__":
    main()
