"""The demo's data: TPC-H ``lineitem`` with WAIR's widened ship-date gap at a scale factor,
and the demo query log (:mod:`engine.scenarios.demo_log`: hot ranges, a shift from
``l_shipdate`` to ``l_commitdate``, an independent ``l_suppkey`` filter), both generated
offline (``tpchgen-cli`` and DuckDB) into the workspace once and reused.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from engine.scenarios import demo_log, tpch
from engine.spark import tpch_data

if TYPE_CHECKING:
    from engine.core.config import Settings

__all__ = ["DEMO_SCALE", "make_demo_data"]

#: the demo's default TPC-H scale factor: 6M rows, about 3,000 micro-partitions of 2,000 rows
DEMO_SCALE = 1.0


def make_demo_data(settings: "Settings", scale: float = DEMO_SCALE, queries: int | None = None,
                   progress: Callable[[str], None] | None = None) -> tuple[Path, Path]:
    """``(table_file, query_file)`` under ``<home>/sample/sf<scale>/``, generated unless
    present: the lineitem Parquet (:func:`engine.spark.tpch_data.make_lineitem`, rows in
    ``o_orderdate`` order) and the demo query log over its ranges (JSON Lines)."""
    say = progress or (lambda _m: None)
    out = Path(settings.home) / "sample" / f"sf{scale:g}"
    out.mkdir(parents=True, exist_ok=True)
    table_file, query_file = out / "lineitem.parquet", out / "lineitem_demo_queries.jsonl"
    if not table_file.is_file():
        tpch_data.make_lineitem(scale, table_file, progress=say)
    if not query_file.is_file():
        count = queries or demo_log.DEMO_LOG_QUERIES
        log = demo_log.make_demo_log(table_file, count=count)
        tpch.write_jsonl(log, query_file)
        say(f"wrote {count} demo queries to {query_file}")
    return table_file, query_file
