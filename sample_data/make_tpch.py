#!/usr/bin/env python
"""Make a TPC-H ``lineitem`` table with WAIR's widened ship-date gap (section 6.2.1, footnote 6).

    python sample_data/make_tpch.py --scale 0.05 --out sample_data/lineitem.parquet

Generates lineitem + orders with tpchgen-cli, adds o_orderdate, orders rows by o_orderdate
(the ingestion order), and redraws l_shipdate = o_orderdate + 1..1000 days; commit and
receipt dates move with it. The logic lives in ``engine.spark.tpch_data`` (see its docstring).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.scenarios import tpch  # noqa: E402
from engine.spark import tpch_data  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=tpch.DEMO_SCALE,
                        help=f"TPC-H scale factor (SF 1 = 6M lineitem rows; default {tpch.DEMO_SCALE})")
    parser.add_argument("--out", default=str(Path(__file__).with_name("lineitem.parquet")))
    parser.add_argument("--max-gap", type=int, default=tpch.WAIR_MAX_GAP,
                        help="largest l_shipdate - o_orderdate in days (TPC-H: 121; WAIR: 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-comment", dest="comment", action="store_false",
                        help="leave out l_comment (smaller files)")
    parser.add_argument("--commit-mode", choices=("shift", "tpch"), default="shift",
                        help="shift l_commitdate with the ship date (default) or keep TPC-H's")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    result = tpch_data.make_lineitem(args.scale, args.out, max_gap=args.max_gap, seed=args.seed,
                                     comment=args.comment, commit_mode=args.commit_mode,
                                     threads=args.threads,
                                     progress=lambda m: print(m, file=sys.stderr))
    print(f"{result['rows']} rows, {result['bytes']} bytes -> {result['path']} ({result['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
