#!/usr/bin/env python
"""Make the sample query log: TPC-H-shaped range scans on lineitem, as JSON Lines.

    python sample_data/make_queries.py --data sample_data/lineitem.parquet \
        --count 300 --out sample_data/lineitem_queries.jsonl

Templates Q1, Q6, Q12, Q14 (TPC-H) plus commit-date, ship+commit and quantity/discount
scans, mostly on l_shipdate; ranges of one to three months, starts skewed to recent
months (Zipf, alpha 2) or uniform; timestamps spread over three weeks. Deterministic for a
seed. The logic lives in ``engine.scenarios.tpch.make_queries``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.scenarios import tpch  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", "--table-file", dest="data", default=str(HERE / "lineitem.parquet"),
                        help="lineitem Parquet whose date ranges the queries should fit")
    parser.add_argument("--count", type=int, default=tpch.DEMO_QUERIES)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--start", default="2024-03-04T08:00:00+00:00", help="first timestamp")
    parser.add_argument("--days", type=float, default=21.0, help="timestamps spread over this many days")
    parser.add_argument("--local-share", type=float, default=0.6,
                        help="share of queries skewed toward recent months (the rest uniform)")
    parser.add_argument("--out", default=str(HERE / "lineitem_queries.jsonl"))
    args = parser.parse_args(argv)
    queries = tpch.make_queries(args.count, seed=args.seed, data=args.data, start=args.start,
                                days=args.days, local_share=args.local_share)
    n = tpch.write_jsonl(queries, args.out)
    print(f"{n} queries -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
