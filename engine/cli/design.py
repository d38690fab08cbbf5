"""``layout-advisor design pto TABLE``: a whole-table design from the workload."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.output import add_json_flag, aligned, emit
from engine.core.fmt import JEDEC_UNITS, human_bytes

#: candidate rows shown in text (all of them with --json)
SHOWN = 15


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("design", help="whole-table designs (PTO)",
                              description="How a table should be laid out at all, from its workload.")
    sub = p.add_subparsers(dest="design", metavar="DESIGN")
    sub.required = True
    # --- PTO
    q = sub.add_parser(
        "pto", help="partition column, sort scheme, file and row-group size (PTO)",
        description="PTO (SIGMOD 2026): candidates from the workload, labels on a sample for 12 "
                    "of them, gradient-boosted trees for the rest; the best layout and why, beside "
                    "the layout as ingested and the human expert's (Algorithm 4).")
    q.add_argument("table", help="table name")
    q.add_argument("--top-k", dest="top_k", type=_positive, default=3, metavar="K",
                   help="partition columns and sort schemes kept (default 3)")
    q.add_argument("--label", choices=("cost", "skip"), default="cost",
                   help="cost: rows read plus file and row-group open costs (default); "
                        "skip: the paper's skipped rows")
    add_json_flag(q)
    q.set_defaults(func=_pto)


def _mb(n: float) -> str:
    return human_bytes(n, JEDEC_UNITS)


def pto_text(d: Mapping[str, Any]) -> str:
    rows = [[i + 1, c["partition_by"] or "-", c["sort"], _mb(c["target_file_bytes"]),
             _mb(c["row_group_bytes"]), f"{c['predicted']:.2f}",
             None if c["measured"] is None else f"{c['measured']:.2f}"]
            for i, c in enumerate(d["candidates"][:SHOWN])]
    base = [[b["name"], b["partition_by"] or "-", b["sort"], _mb(b["target_file_bytes"]),
             _mb(b["row_group_bytes"]), f"{b['measured']:.2f}"] for b in d["baselines"]]
    return "\n".join([
        d["reason"],
        f"{d['fragments']} fragments; sample {d['sample_rows']} rows ({d['sample_rate']:.2%}); "
        f"label {d['label']} (% saved, higher is better)",
        "",
        aligned(["#", "partition", "sort", "file", "row group", "predicted", "measured"], rows,
                right=(0, 3, 4, 5, 6)),
        f"... {len(d['candidates']) - SHOWN} more (--json)" if len(d["candidates"]) > SHOWN else "",
        "baselines (measured on the same sample):",
        aligned(["layout", "partition", "sort", "file", "row group", "measured"], base, right=(3, 4, 5)),
    ]).rstrip()


def _pto(args: argparse.Namespace, settings: Any) -> None:
    emit(args, api.design_pto(settings, args.table, top_k=args.top_k, label=args.label), pto_text)
