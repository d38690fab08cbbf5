"""``layout-advisor design paw TABLE``: preview a whole-table design (issue 12: PAW).

Prints the PAW tree summary and the predicted rows per query of PAW beside the greedy
Qd-tree, the k-d tree and the lower bounds; ``plan create TABLE --policy paw`` stores it.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.output import add_json_flag, aligned, emit

_METHODS = (("paw", "PAW"), ("qdtree", "Qd-tree"), ("kdtree", "k-d tree"), ("lb_b", "LB_b"),
            ("lb", "LBCost"))


# --- PAW
def _paw_text(out: Mapping[str, Any]) -> str:
    d = out["design"]
    if d is None:
        return f"no PAW design for {out['table']}: {out['reason']}"
    s = d["summary"]
    head = (f"PAW design of {out['table']} (snapshot {out['snapshot']}, {out['queries']} queries)\n"
            f"  columns {', '.join(s['columns'])}; δ = {s['delta']:.4g}; b_min = {s['b_min_rows']} rows "
            f"({s['b_min']} of the {s['sample_rows']}-row sample); Ψ = {s['psi']}, α = {s['alpha']:g}\n"
            f"  {s['leaves']} partitions ({s['irregular_leaves']} irregular holding {s['irregular_rows']} "
            f"sampled rows), {s['min_leaf_rows']}..{s['max_leaf_rows']} sampled rows each\n"
            f"predicted rows read per query (table rows {s['table_rows']}):")
    rows = [[label, f"{d['costs'][k]['history']:.0f}", f"{d['costs'][k]['worst_future']:.0f}"]
            for k, label in _METHODS]
    return head + "\n" + aligned(["method", "history", "worst δ-similar future"], rows, right=(1, 2))


def _do_paw(args: argparse.Namespace, settings: Any) -> int:
    out = api.design_paw(settings, args.table, delta=args.delta, b_min_rows=args.b_min_rows,
                         alpha=args.alpha, psi=args.psi, window=args.window)
    emit(args, out, _paw_text)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("design", help="preview a whole-table layout design (PAW)")
    sub = parser.add_subparsers(dest="design_command", metavar="DESIGN")
    sub.required = True
    paw = sub.add_parser("paw", help="PAW partition tree robust to δ-similar queries; predicted costs")
    paw.add_argument("table", metavar="TABLE")
    paw.add_argument("--delta", default="auto",
                     help="δ as a fraction of each column's domain (e.g. 0.01), or 'auto' (default)")
    paw.add_argument("--b-min-rows", dest="b_min_rows", type=int, default=None,
                     help="minimum rows per partition (default: the median file's rows)")
    paw.add_argument("--alpha", type=float, default=3.0, help="split policy Ψ's α (default 3)")
    paw.add_argument("--psi", default="text", choices=("text", "printed"),
                     help="split policy reading (PAW_PTO.md decision 1; default text)")
    paw.add_argument("--window", type=int, default=None, help="use the last N queries (default all)")
    add_json_flag(paw)
    paw.set_defaults(func=_do_paw)
