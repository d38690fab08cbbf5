"""``layout-advisor calibrate [--show] [--rows N,N,N]``: measure the cost model's rates."""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from engine import api
from engine.cli.output import add_json_flag, emit
from engine.core.errors import InvalidParameterError
from engine.core.fmt import format_seconds, human_bytes

_LABELS = {"rewrite_fixed_s": "rewrite job, fixed", "rewrite_read_bytes_per_s": "rewrite read",
           "sort_bytes_per_s": "sort and write", "query_fixed_s": "query, fixed",
           "query_scan_bytes_per_s": "query scan"}


def _value(key: str, value: float) -> str:
    if not key.endswith("bytes_per_s"):
        return format_seconds(value) if value else "0 (not calibrated)"
    return f"{human_bytes(value)}/s" if value else "- (not calibrated)"


def _text(data: Mapping[str, Any]) -> str:
    cal = data.get("calibration")
    lines = [f"calibrated {cal['measured_at']} on Spark {cal['spark_master']}" if cal
             else "not calibrated yet: run `layout-advisor calibrate`"]
    for key, item in (data.get("effective") or {}).items():
        lines.append(f"  {_LABELS.get(key, key):<20} {_value(key, item['value']):>16}  "
                     f"({item['source']})")
    for p in (cal or {}).get("points", []):
        lines.append(f"  measured: {p['rows']:>9,} rows, {human_bytes(p['bytes']):>10}: rewrite "
                     f"{p['rewrite_s']:.2f} s, read {p['read_s']:.2f} s, "
                     f"query {p['query_s'] * 1000:.1f} ms")
    return "\n".join(lines)


def _rows(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidParameterError(f"--rows: expected sizes like 50000,200000,800000, "
                                    f"got {text!r}") from None


def _run(args: argparse.Namespace, settings: Any) -> int:
    if not args.show:
        api.calibrate(settings, rows=_rows(args.rows))
    emit(args, api.show_calibration(settings), _text)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate", help="measure rewrite and query costs on the configured Spark",
        description="Measure a rewrite job's fixed cost, the read and sort-and-write rates "
                    "(Spark) and a query's fixed cost and scan rate (DuckDB) at a few sizes; "
                    "store them in the workspace. Configured values override them.")
    p.add_argument("--show", action="store_true", help="print the stored rates, measure nothing")
    p.add_argument("--rows", help="comma-separated sizes in rows (default 50000,200000,800000)")
    add_json_flag(p)
    p.set_defaults(func=_run)
