"""The demo table written from Arrow: the generated ``lineitem`` file cut into
micro-partitions of exactly ``target_rows`` rows in its row order, without Spark.

Why not the general ingest (:func:`engine.spark.ingest.create_table`): the demo's data is
ours and :func:`engine.spark.tpch_data.make_lineitem` already writes it in ingestion order
(``o_orderdate``, WAIR section 6.2.1), so there is nothing to number or sort. The Spark
path still numbers the rows, shuffles them so that every write task holds whole buckets,
and commits 3,001 small files through the Hadoop committer; on two shared cores that write
was most of the SF 1 build (see ``bench/ui/README.md``). Here one streaming
pass slices record batches into files of exactly ``target_rows`` rows (the last one
smaller), a couple of writer threads encode them (pyarrow releases the GIL), and the files
are published like the Spark ingest publishes its own: one Iceberg append commit (or a
native snapshot) after the row counts were checked. Rewrites of the table still run on
Spark (the executor); these are ordinary Parquet files, snappy-compressed with one row
group each, as Spark writes them.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pyarrow as pa
import pyarrow.parquet as pq

from engine.core.errors import DataFileError, ExecutionError, InvalidParameterError, TableExistsError
from engine.table import footers, fs
from engine.table.model import Snapshot
from engine.table.publish import check_counts, publish_iceberg
from engine.table.store import TableStore, validate_name

if TYPE_CHECKING:
    from engine.core.config import Settings

Progress = Callable[[str], None]

#: the namespace of tables the advisor creates in the workspace's Iceberg catalog (as the ingest)
NAMESPACE = "default"
#: rows read from the source per batch (then cut into files of ``target_rows``)
READ_BATCH_ROWS = 65_536
#: files between two progress lines
PROGRESS_EVERY = 500


def _quiet(_: str) -> None:
    pass


#: the shape of ``demo --large-files``: files of about a million rows in row groups of a
#: tenth of that (the 64-512 MB class of real tables, scaled to one machine)
LARGE_FILE_ROWS = 1_000_000
#: ... and at least this many files, so a small source still spans several files
LARGE_MIN_FILES = 4
#: row groups per large file
LARGE_ROW_GROUPS = 10


def large_file_shape(total_rows: int) -> tuple[int, int]:
    """(rows per file, rows per row group) of ``demo --large-files`` for a source of
    ``total_rows`` rows: the rows split evenly into files of about :data:`LARGE_FILE_ROWS`
    rows (at least :data:`LARGE_MIN_FILES` files), each in :data:`LARGE_ROW_GROUPS` row
    groups, so no file is a small remainder.

    >>> large_file_shape(6_001_215), large_file_shape(200_000)
    ((1000203, 100021), (50000, 5000))
    """
    if total_rows <= 0:
        raise DataFileError("the source holds no rows")
    files = max(LARGE_MIN_FILES, round(total_rows / LARGE_FILE_ROWS))
    per_file = max(LARGE_ROW_GROUPS, math.ceil(total_rows / files))
    return per_file, math.ceil(per_file / LARGE_ROW_GROUPS)


def source_rows(source: str | os.PathLike) -> int:
    """Rows of the Parquet file ``source``, from its footer."""
    return int(pq.ParquetFile(str(source)).metadata.num_rows)


def file_name(index: int) -> str:
    """Name of the ``index``-th micro-partition: zero-padded, so path order is row order.

    >>> file_name(0), file_name(3000)
    ('part-000000.parquet', 'part-003000.parquet')
    """
    return f"part-{index:06d}.parquet"


def nullable(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every field nullable, as Spark writes every column: the table's
    Iceberg schema then has optional fields, like one created by the Spark ingest, and
    the executor's rewritten files (Spark) match it.

    >>> nullable(pa.schema([pa.field("a", pa.int64(), nullable=False)])).field("a").nullable
    True
    """
    return pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata)


def _chunks(source: str, target_rows: int):
    """Tables of exactly ``target_rows`` rows (the last one smaller) in the file's row order,
    streamed: at most one read batch plus one chunk in memory."""
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in pq.ParquetFile(source).iter_batches(batch_size=READ_BATCH_ROWS):
        pending.append(batch)
        held += batch.num_rows
        while held >= target_rows:
            table = pa.Table.from_batches(pending)
            yield table.slice(0, target_rows)
            rest = table.slice(target_rows)
            pending, held = rest.to_batches(), rest.num_rows
    if held:
        yield pa.Table.from_batches(pending)


def write_micro_partitions(source: str, out_dir: str, target_rows: int,
                           progress: Progress = _quiet, threads: int = 2,
                           row_group_rows: int | None = None) -> tuple[list[str], int]:
    """Cut ``source`` (one Parquet file) into files of exactly ``target_rows`` rows under
    ``out_dir``, in row order; returns (the files in row order, total rows). Each file is
    one row group, or row groups of ``row_group_rows`` rows (the last of a file may hold
    fewer) when given.

    ``threads`` writers encode files in parallel, with at most ``2 * threads`` files in
    flight, so memory stays a few chunks whatever the table's size."""
    if target_rows <= 0:
        raise InvalidParameterError(f"target rows must be positive, got {target_rows}")
    if row_group_rows is not None and row_group_rows <= 0:
        raise InvalidParameterError(f"row-group rows must be positive, got {row_group_rows}")
    total_rows = pq.ParquetFile(source).metadata.num_rows
    if total_rows == 0:
        raise DataFileError(f"{source}: no rows")
    expected = math.ceil(total_rows / target_rows)
    unit = (f"files of {target_rows:,} rows in row groups of {row_group_rows:,}" if row_group_rows
            else f"micro-partitions of {target_rows:,} rows")
    progress(f"writing {total_rows:,} rows as {expected:,} {unit} (Arrow, in ingestion order)")
    os.makedirs(out_dir, exist_ok=True)
    written: list[str] = []
    rows = 0
    with cf.ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        in_flight: list[cf.Future] = []
        for i, chunk in enumerate(_chunks(source, target_rows)):
            path = os.path.join(out_dir, file_name(i))
            in_flight.append(pool.submit(pq.write_table, chunk.cast(nullable(chunk.schema)), path,
                                         compression="snappy",
                                         row_group_size=row_group_rows or target_rows))
            written.append(path)
            rows += chunk.num_rows
            if len(in_flight) >= 2 * max(1, threads):
                in_flight.pop(0).result()
            if (i + 1) % PROGRESS_EVERY == 0:
                progress(f"wrote {i + 1:,} of {expected:,} micro-partitions")
        for future in in_flight:
            future.result()
    if len(written) != expected or rows != total_rows:
        raise ExecutionError(f"expected {expected} files of {total_rows} rows in {out_dir}, "
                             f"wrote {len(written)} files of {rows}")
    return written, rows


def create_table(store: TableStore, name: str, source: str | os.PathLike, target_rows: int,
                 table_format: str = "iceberg", progress: Progress | None = None,
                 threads: int = 2, row_group_rows: int | None = None) -> Snapshot:
    """Managed table ``name`` from the demo's generated file, in its row order.

    ``table_format`` "iceberg": table ``default.NAME`` of the workspace's SQLite catalog,
    files under its location, one append commit (like :func:`engine.spark.ingest.create_table`
    with ``format="iceberg"``); "native": the workspace's own snapshot "1". On failure
    nothing is published and the written files are removed. ``store``: the home's table
    catalog; ``row_group_rows``: rows per row group (None: one row group per file)."""
    say = progress or _quiet
    validate_name(name)
    if store.exists(name):
        raise TableExistsError(f"table {name!r} already exists (drop it or pick another name)")
    source = str(source)
    if table_format == "iceberg":
        return _create_iceberg(store.settings, store, name, source, target_rows, say, threads,
                               row_group_rows)
    if table_format != "native":
        raise InvalidParameterError(f"unknown table format {table_format!r}: use iceberg or native")
    out_dir = store.new_data_dir(name, "create")
    try:
        written, total = write_micro_partitions(source, out_dir, target_rows, say, threads,
                                                row_group_rows)
        say(f"reading the footers of {len(written):,} files")
        schema, parts = footers.read_partitions(written)
        check_counts(parts, target_rows, total)
        snap = store.create(name, schema=schema, partitions=parts, operation="create",
                            location=store.managed_location(name), managed=True,
                            target_rows=target_rows,
                            summary={"source": source, "format": "parquet", "order_by": None,
                                     "rows": total, "target_rows": target_rows, "writer": "arrow"})
    except BaseException:
        fs.delete_dir(out_dir)
        if not store.exists(name):
            shutil.rmtree(store.table_dir(name), ignore_errors=True)
        raise
    say(f"table {name}: snapshot {snap.id}, {snap.partition_count:,} micro-partitions, {total:,} rows")
    return snap


def _create_iceberg(settings: "Settings", store: TableStore, name: str, source: str,
                    target_rows: int, say: Progress, threads: int,
                    row_group_rows: int | None = None) -> Snapshot:
    from engine.table.formats import iceberg  # lazy: pyiceberg + sqlalchemy, ~0.7 CPU-s at import

    catalog = iceberg.workspace_catalog(str(settings.home))
    identifier = f"{NAMESPACE}.{name}"
    if catalog.table_exists(identifier):
        raise TableExistsError(f"the workspace's iceberg catalog already has {identifier}")
    root = Path(settings.home).expanduser().resolve() / "iceberg" / "warehouse" / NAMESPACE / name
    location = iceberg.file_uri(str(root))
    try:
        written, total = write_micro_partitions(source, str(root / "data" / "create"),
                                                target_rows, say, threads, row_group_rows)
        snap = publish_iceberg(store, catalog, name, identifier, location, written, target_rows,
                               total, source, say)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(store.table_dir(name), ignore_errors=True)
        raise
    say(f"table {name}: iceberg {identifier}, snapshot {snap.id}, "
        f"{snap.partition_count:,} micro-partitions, {total:,} rows")
    return snap
