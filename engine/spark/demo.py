"""The demo's data: TPC-H ``lineitem`` with WAIR's widened ship-date gap at a scale factor,
and the demo query log (:mod:`engine.scenarios.demo_log`: hot ranges, a shift from
``l_shipdate`` to ``l_commitdate``, an independent ``l_suppkey`` filter), both generated
offline (``tpchgen-cli`` and DuckDB) into the workspace once and reused.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from engine.core.errors import InvalidParameterError
from engine.scenarios import demo_log, demo_table, tpch
from engine.spark import tpch_data
from engine.spark.ingest import create_table as spark_create_table
from engine.spark.session import get_spark

if TYPE_CHECKING:
    from engine.core.config import Settings
    from engine.table.store import TableStore
    from engine.table.model import Snapshot

__all__ = ["DEMO_SCALE", "DEMO_WRITERS", "create_demo_table", "make_demo_data", "start_spark_early"]

#: how the demo table's files are written: "arrow" (default: one streaming pass over our
#: generated file, no Spark) or "spark" (the general ingest, :func:`engine.api.create_table`)
DEMO_WRITERS = ("arrow", "spark")

#: the demo's default TPC-H scale factor: 6M rows, about 3,000 micro-partitions of 2,000 rows
DEMO_SCALE = 1.0


def make_demo_data(settings: "Settings", scale: float = DEMO_SCALE, queries: int | None = None,
                   progress: Callable[[str], None] | None = None) -> tuple[Path, Path]:
    """``(table_file, query_file)`` under ``<home>/sample/sf<scale>/``, generated unless
    present: the lineitem Parquet (:func:`engine.spark.tpch_data.make_lineitem`, rows in
    ``o_orderdate`` order) and the demo query log over its ranges (gzipped JSON Lines,
    one file per query count)."""
    say = progress or (lambda _m: None)
    out = Path(settings.home) / "sample" / f"sf{scale:g}"
    out.mkdir(parents=True, exist_ok=True)
    count = queries or demo_log.DEMO_LOG_QUERIES
    table_file = out / "lineitem.parquet"
    # gzip: dashboard panels repeat their statements, so the log compresses ~30x
    query_file = out / f"lineitem_demo_queries_{count}.jsonl.gz"
    if not table_file.is_file():
        tpch_data.make_lineitem(scale, table_file, progress=say)
    if not query_file.is_file():
        log = demo_log.make_demo_log(table_file, count=count)
        tpch.write_jsonl(log, query_file)
        say(f"wrote {count:,} demo queries ({count / demo_log.DEMO_DAYS:,.0f} a day over "
            f"{demo_log.DEMO_DAYS} days) to {query_file}")
    return table_file, query_file


def start_spark_early(settings: "Settings") -> threading.Thread:
    """Start the process's SparkSession in a background thread and return the thread.

    The demo's data generation runs outside the JVM (``tpchgen-cli``, DuckDB), so the
    ~12-30 s JVM start overlaps it instead of following it; the ingest's own
    :func:`~engine.spark.session.get_spark` then waits for this session (one lock) rather
    than starting a second one. A failure here is not lost: the ingest starts Spark again
    and reports the error itself.
    """

    def start() -> None:
        try:
            get_spark(settings)
        except Exception:  # noqa: BLE001 - the ingest's own get_spark reports it
            pass

    thread = threading.Thread(target=start, name="spark-warm-up", daemon=True)
    thread.start()
    return thread


def create_demo_table(store: "TableStore", name: str, source: str | Path, target_rows: int,
                      table_format: str = "iceberg", writer: str = "arrow",
                      progress: Callable[[str], None] | None = None,
                      row_group_rows: int | None = None) -> "Snapshot":
    """The demo table ``name`` from a file already in ingestion order (the generated TPC-H
    ``lineitem`` or the committed sample), cut into micro-partitions of ``target_rows``.

    ``writer`` "arrow" (default) writes the files from Arrow in the file's row order
    (:mod:`engine.scenarios.demo_table`: no Spark, no shuffle); "spark" runs the general
    ingest (:func:`engine.spark.ingest.create_table`), which numbers the rows and
    repartitions them into write tasks. Both publish the same rows in the same files order
    with the same row counts; ``bench/ui/README.md`` has the times.

    ``row_group_rows``: rows per row group (``demo --large-files``: files of ~1M rows in row
    groups of a tenth, :func:`engine.scenarios.demo_table.large_file_shape`); None: one row
    group per file. Only the Arrow writer takes it (it cuts row groups by count, exactly)."""
    if writer == "arrow":
        return demo_table.create_table(store, name, source, target_rows, table_format, progress,
                                       row_group_rows=row_group_rows)
    if row_group_rows is not None:
        raise InvalidParameterError("row groups of a set size (demo --large-files) are written "
                                    "by the arrow writer only: drop --writer spark")
    if writer == "spark":
        return spark_create_table(store, name, str(source), target_rows=target_rows,
                                  progress=progress, format=table_format)
    raise InvalidParameterError(f"unknown demo writer {writer!r}: use one of {', '.join(DEMO_WRITERS)}")
