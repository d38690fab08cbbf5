"""``layout-advisor design paw|pto TABLE``: preview a whole-table layout design.

``design paw`` prints the PAW tree summary and the predicted rows per query of PAW beside
the greedy Qd-tree, the k-d tree and the lower bounds (PAW section VI); ``design pto`` the PTO
candidates ranked by predicted saving with the chosen layout and the baselines (PTO section 4.1.2).
``plan create TABLE --policy paw|pto`` stores a design as a proposed plan.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.args import non_negative_int, number, positive_int
from engine.cli.output import add_json_flag, aligned, emit
from engine.core.fmt import JEDEC_UNITS, human_bytes

#: PTO candidate rows shown in text (all of them with --json)
SHOWN = 15

_METHODS = (("paw", "PAW"), ("qdtree", "Qd-tree"), ("kdtree", "k-d tree"), ("lb_b", "LB_b"),
            ("lb", "LBCost"))


# --- PAW
#: δ: a fraction of each column's domain
_fraction = number(low=0, high=1)


def paw_delta(text: str) -> float | str:
    """``--delta``: ``auto`` (δ′ from the two halves of the history, PAW §IV-E),
    ``auto-nearest`` (the one-sided nearest distance, a departure) or a fraction in [0, 1]
    of each column's domain. Above 1 every extended query q* (Lemma 1) already covers the
    whole domain, so a larger δ would only look different from δ = 1: refused.

    >>> paw_delta("AUTO"), paw_delta("auto-nearest"), paw_delta("0.01"), paw_delta("1")
    ('auto', 'auto-nearest', 0.01, 1.0)
    >>> paw_delta("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 1.5 must be at most 1
    """
    word = text.strip().lower()
    return word if word in api.PAW_DELTA_ESTIMATORS else _fraction(text)


def add_paw_args(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """PAW's design flags, shared by ``design paw`` and ``plan create --policy paw``
    (``--alpha`` is each command's own: ``plan create`` shares it with WAIR);
    without ``defaults`` an absent flag stays None (the policy's default applies)."""
    parser.add_argument("--delta", type=paw_delta, default="auto" if defaults else None, metavar="D|auto|auto-nearest",
                        help="PAW: δ as a fraction of each column's domain (e.g. 0.01), 'auto' (δ′ of §IV-E, "
                             "the default) or 'auto-nearest'")
    parser.add_argument("--b-min-rows", dest="b_min_rows", type=positive_int, default=None, metavar="N",
                        help="PAW: minimum rows per partition (default: the median file's rows)")
    parser.add_argument("--psi", default="text" if defaults else None, choices=api.PAW_PSI,
                        help="PAW: split policy Ψ reading (see docs/design.md; default text)")
    parser.add_argument("--refine", dest="refine", action=argparse.BooleanOptionalAction,
                        default=True if defaults else None,
                        help="PAW: k-d refinement of large rectangular leaves into [b_min, 2·b_min) rows "
                             "(§IV-E; default on in the product, off in the paper's figures)")
    parser.add_argument("--n-mbr", dest="n_mbr", type=non_negative_int, default=0 if defaults else None, metavar="N",
                        help="PAW: precise descriptors (§V-A), N STR row groups per file (default 0: off, "
                             "as in the paper's runs)")


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


def _do_paw(args: argparse.Namespace, ws: "api.Workspace") -> int:
    out = api.design_paw(ws, args.table, delta=args.delta, b_min_rows=args.b_min_rows,
                         alpha=args.alpha, psi=args.psi, refine=args.refine, window=args.window,
                         n_mbr=args.n_mbr)
    emit(args, out, _paw_text)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "design", help="preview a whole-table layout design (PAW, PTO)",
        description="How a table should be laid out at all, from its workload.")
    sub = parser.add_subparsers(dest="design_command", metavar="DESIGN")
    sub.required = True
    # --- PAW
    paw = sub.add_parser("paw", help="PAW partition tree robust to δ-similar queries; predicted costs")
    paw.add_argument("table", metavar="TABLE")
    add_paw_args(paw, defaults=True)
    paw.add_argument("--alpha", type=number(low=1, low_inclusive=False), default=3.0,
                     help="split policy Ψ's α, > 1 (default 3)")
    paw.add_argument("--window", type=positive_int, default=None, help="use the last N queries (default all)")
    add_json_flag(paw)
    paw.set_defaults(func=_do_paw)
    # --- PTO
    q = sub.add_parser(
        "pto", help="partition column, sort scheme, file and row-group size (PTO)",
        description="PTO (SIGMOD 2026): candidates from the workload, labels on a sample for 12 "
                    "of them, gradient-boosted trees for the rest; the best layout and why, beside "
                    "the layout as ingested and the human expert's (Algorithm 4).")
    q.add_argument("table", help="table name")
    q.add_argument("--top-k", dest="top_k", type=positive_int, default=3, metavar="K",
                   help="partition columns and sort schemes kept (default 3)")
    q.add_argument("--label", choices=("cost", "skip"), default="cost",
                   help="cost: rows read plus file and row-group open costs (default); "
                        "skip: the paper's skipped rows")
    q.add_argument("--verify-top", dest="verify_top", type=number(low=0, integer=True), default=0,
                   metavar="N", help="label the N best predicted layouts on the sample too and choose "
                                     "again (default 0: the paper's choice)")
    q.add_argument("--refine-sizes", dest="refine_sizes", action="store_true",
                   help="label every file and row-group size of the chosen partition and sort "
                        "and choose again (default off: the paper's choice)")
    q.add_argument("--training-budget", dest="training_budget", type=non_negative_int, default=0, metavar="N",
                   help="label more random sizes of the (partition, sort) pairs until N layouts are "
                        "labelled, for tables with few candidates (default 0: the paper's 12 draws)")
    add_pto_design_rows(q)
    add_json_flag(q)
    q.set_defaults(func=_pto)


def add_pto_design_rows(parser: argparse.ArgumentParser) -> None:
    """PTO's ``--max-design-rows``, shared by ``design pto`` and ``plan create --policy pto``:
    parsed as an integer here, its range checked by :class:`PtoConfig` (one line, exit 2)."""
    parser.add_argument("--max-design-rows", dest="max_design_rows", type=number(integer=True), default=None,
                        metavar="N", help="PTO: design on a random sample of about N of the table's rows "
                                          "(faster on a large table; default 0: every row, the paper's)")
    parser.add_argument("--open-cost-offset", dest="open_cost_offset", action="store_const", const=True,
                        default=None, help="PTO (ours): compute the open cost of the files a query opens "
                                           "when only the partition column prunes, instead of learning it "
                                           "(default off: the paper's model)")


def _mb(n: float) -> str:
    return human_bytes(n, JEDEC_UNITS)


def pto_text(d: Mapping[str, Any]) -> str:
    rows = [[i + 1, c["partition_by"] or "-", c["sort"], _mb(c["target_file_bytes"]),
             _mb(c["row_group_bytes"]), f"{c['predicted']:.2f}",
             None if c["measured"] is None else f"{c['measured']:.2f}"]
            for i, c in enumerate(d["candidates"][:SHOWN])]
    base = [[b["name"], b["partition_by"] or "-", b["sort"], _mb(b["target_file_bytes"]),
             _mb(b["row_group_bytes"]), f"{b['cost']:.2f}", f"{b['skip']:.2f}"] for b in d["comparison"]]
    return "\n".join([
        d["reason"],
        f"{d['fragments']} fragments; "
        + (f"design on {d['design_rows']} sampled rows (--max-design-rows {d['max_design_rows']}); "
           if d.get("max_design_rows") else "")
        + f"sample {d['sample_rows']} rows ({d['sample_rate']:.2%}); "
        f"label {d['label']} (% saved, higher is better)",
        "",
        aligned(["#", "partition", "sort", "file", "row group", "predicted", "measured"], rows,
                right=(0, 3, 4, 5, 6)),
        f"... {len(d['candidates']) - SHOWN} more (--json)" if len(d["candidates"]) > SHOWN else "",
        "PTO and the baselines, measured on the same sample (% saved):",
        aligned(["layout", "partition", "sort", "file", "row group", "cost", "skip"], base, right=(3, 4, 5, 6)),
    ]).rstrip()


def _pto(args: argparse.Namespace, ws: "api.Workspace") -> None:
    emit(args, api.design_pto(ws, args.table, top_k=args.top_k, label=args.label,
                              verify_top=args.verify_top, refine_sizes=args.refine_sizes,
                              training_budget=args.training_budget,
                              max_design_rows=args.max_design_rows,
                              open_cost_offset=bool(args.open_cost_offset)), pto_text)
