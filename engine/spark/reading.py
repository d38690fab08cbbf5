"""Read a plan's input files ONCE, each row tagged with its group.

One scan of all the plan's files; a row's group comes from its file's path
(``_metadata.file_path``) looked up in a driver-built hash table
(:class:`~engine.spark.hashing.PathLookup`). A union of one scan per group, the previous
design, made every group at least one task in the write and again in the verification
(4.9x a bare ``orderBy`` for a 50-group plan); a broadcast join on the path runs its own
Spark job; a literal map is searched linearly per row.

Before anything is read by Spark, :func:`check_inputs` reads every input's footer on the
driver: a file deleted under the table, or two files whose
columns have different Arrow types (``int32`` beside ``int64``, a column one of them lacks,
``timestamp[ms]`` beside ``timestamp[us]``), refuse the run in one line naming the files
and the column, before anything is written: Spark would otherwise fail deep in its job, or
write every row with the first file's types (a change of type, or of value, for the rows
of the other file).
"""

from __future__ import annotations

import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Sequence

from engine.core.errors import DataFileError, ExecutionError
from engine.spark.arrow_types import read_schema
from engine.spark.hadoop_files import file_path_spellings
from engine.spark.hashing import PathLookup, long_array
from engine.spark.jobspec import (
    FILE_COLUMN, GROUP_COLUMN, ORD_COLUMN, ROW_COLUMN, GroupSpec, q,
)
from engine.table import fs as table_fs

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

    from engine.table.model import TableSchema

#: file names whose URL encoding is the name itself: spelled from their directory's
#: spelling without asking the JVM once per file
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9._=+-]+$")
_PROBE = "__la_probe.parquet"
#: threads reading the inputs' footers on an object store (each answers in tens of ms)
FOOTER_THREADS = 8


def input_schema(path: str) -> Any:
    """The Spark schema of a Parquet file, from its footer read on the driver: Spark's own
    inference would run a job of its own for every read."""
    import pyarrow.parquet as pq  # beside pyarrow: only when a plan runs

    fs, inner = table_fs.filesystem(path)
    return spark_schema_of(pq.read_schema(inner, filesystem=fs))


def spark_schema_of(arrow_schema: Any) -> Any:
    """The Spark schema Spark reads a file of ``arrow_schema`` with (timestamps without a
    time zone as TIMESTAMP_NTZ)."""
    from pyspark.sql.pandas.types import from_arrow_schema  # pyspark: costly, deferred

    return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)


def path_spellings(spark: "SparkSession", paths: Sequence[str]) -> list[list[str]]:
    """Spark's possible spellings of each path (:func:`file_path_spellings`), asking the
    JVM once per directory for plain file names."""
    by_dir: dict[str, list[str]] = {}
    out = []
    for path in paths:
        head, name = posixpath.split(path)
        if not _PLAIN_NAME.match(name):
            out.append(file_path_spellings(spark, path))
            continue
        if head not in by_dir:
            by_dir[head] = [s[:-len(_PROBE)]
                            for s in file_path_spellings(spark, f"{head}/{_PROBE}")]
        out.append([prefix + name for prefix in by_dir[head]])
    return out


def file_lookup(spark: "SparkSession", paths: Sequence[str]) -> PathLookup:
    """The table from each spelling of ``paths[i]`` to ``i``."""
    values: dict[str, int] = {}
    for i, spellings in enumerate(path_spellings(spark, paths)):
        for s in spellings:
            values[s] = i
    return PathLookup(values)


def _per_file(values: Sequence[int], file_id: "Column") -> "Column":
    """``values[file_id]``, -1 for a row of an unknown file (verification then fails)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    return F.when(file_id >= 0, F.element_at(long_array(values), file_id + 1)) \
        .otherwise(F.lit(-1)).cast("int")


def scan_tagged(spark: "SparkSession", spark_schema: Any, names: Sequence[str],
                paths: Sequence[str], groups: Sequence[int],
                positions: Sequence[int] | None = None) -> "DataFrame":
    """ONE scan of ``paths``: the columns ``names``, each row's group (``groups[i]`` for a
    row of ``paths[i]``) and, with ``positions``, its file's position (ORD_COLUMN) and its
    row's position in the file (ROW_COLUMN)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    raw = spark.read.schema(spark_schema).parquet(*paths)
    if positions is None and len(set(groups)) == 1:
        # one group (every sort or Hilbert plan of one group, the read-back of its files):
        # the group is a constant, no per-row hash of the row's file path and lookup (a
        # row can only come from ``paths``: the scan reads nothing else)
        return raw.select(*[F.col(q(c)) for c in names],
                          F.lit(int(groups[0])).cast("int").alias(GROUP_COLUMN))
    lookup = file_lookup(spark, paths)
    first = [F.col(q(c)) for c in names] + [
        lookup.column(F.col("_metadata.file_path")).alias(FILE_COLUMN)]
    if positions is not None:
        first.append(F.col("_metadata.row_index").alias(ROW_COLUMN))
    file_id = F.col(FILE_COLUMN)
    extra = [_per_file(groups, file_id).alias(GROUP_COLUMN)]
    if positions is not None:
        extra += [_per_file(positions, file_id).alias(ORD_COLUMN), F.col(ROW_COLUMN)]
    return raw.select(*first).select(*[F.col(q(c)) for c in names], *extra)


def read_inputs(spark: "SparkSession", schema: "TableSchema", specs: Sequence[GroupSpec],
                spark_schema: Any) -> "DataFrame":
    """Every input file read once, each row tagged with its group (and, when a group is
    ``binpack``, its file's position in the group and its row's position in the file)."""
    names = [c for c in schema.names if c in spark_schema.fieldNames()]
    files = [(s.index, pos + 1, p.path) for s in specs for pos, p in enumerate(s.partitions)]
    binpack = any(s.group.layout == "binpack" for s in specs)
    return scan_tagged(spark, spark_schema, names, [f[2] for f in files],
                       [f[0] for f in files], [f[1] for f in files] if binpack else None)


# -- the inputs, checked before anything is written ----------------------------------------
def _footer_schema(path: str) -> "pa.Schema":
    """One input's Arrow schema; a missing or unreadable file is named."""
    try:
        return read_schema(path)
    except FileNotFoundError:
        raise DataFileError(missing_message(path)) from None
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{path}: an input file of the plan cannot be read "
                            f"({str(exc).splitlines()[0]}); nothing was written") from None


#: footers read to learn the inputs' row-group size (spread over the group's files)
ROW_GROUP_SAMPLE = 8


def footer_row_group_rows(paths: Sequence[str], sample: int = ROW_GROUP_SAMPLE) -> int | None:
    """The median rows per row group of up to ``sample`` of ``paths`` (evenly spread),
    from their footers; None when none can be read (the output model then writes one
    row group per file)."""
    import numpy as np
    import pyarrow.parquet as pq  # pyarrow: costly import, deferred

    if not paths:
        return None
    step = max(1, len(paths) // max(1, sample))
    sizes: list[float] = []
    for path in list(paths)[::step][:sample]:
        try:
            fs, inner = table_fs.filesystem(path)
            with fs.open_input_file(inner) as handle:
                meta = pq.ParquetFile(handle).metadata
        except (OSError, ValueError):
            continue
        sizes.extend(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    return max(1, int(round(float(np.median(sizes))))) if sizes else None


def missing_message(path: str) -> str:
    """The one line for an input file that is gone (by hand, or by another tool's
    cleanup): what happened and what to do."""
    return (f"{path}: an input file of the plan is missing (deleted under the table?); "
            "nothing was written or committed; restore the file, or roll the table back to "
            "a snapshot whose files all exist")


def _spell(f: "pa.Field | None") -> str:
    if f is None:
        return "missing"
    return f"{f.type}{'' if f.nullable else ' not null'}"


def schema_difference(a: "pa.Schema", b: "pa.Schema") -> tuple[str, str, str] | None:
    """The first column whose type or nullability differs between ``a`` and ``b``, or
    that only one of them has: ``(column, in a, in b)``; None when they agree (column
    order and field metadata do not count: Spark reads by name, and the output takes the
    first file's metadata).

    >>> import pyarrow as pa
    >>> schema_difference(pa.schema([("k", pa.int64())]), pa.schema([("k", pa.int32())]))
    ('k', 'int64', 'int32')
    >>> schema_difference(pa.schema([("k", pa.int64()), ("v", pa.string())]),
    ...                   pa.schema([("k", pa.int64())]))
    ('v', 'string', 'missing')
    >>> schema_difference(pa.schema([("t", pa.timestamp("us"))]),
    ...                   pa.schema([("t", pa.timestamp("us"))])) is None
    True
    """
    for name in list(a.names) + [n for n in b.names if n not in a.names]:
        fa = a.field(name) if name in a.names else None
        fb = b.field(name) if name in b.names else None
        if fa is None or fb is None or not fa.type.equals(fb.type) or fa.nullable != fb.nullable:
            return name, _spell(fa), _spell(fb)
    return None


def check_inputs(paths: Sequence[str]) -> "pa.Schema":
    """The plan's input files' common Arrow schema, from every footer (in
    :data:`FOOTER_THREADS` threads on an object store; one after the other on a local disk,
    about 1 ms a file); raises :class:`DataFileError` naming a missing or
    unreadable file, :class:`ExecutionError` naming two files and the column whose types
    differ. Called before anything is written."""
    if not any(table_fs.is_uri(p) for p in paths):  # local disk: threads only cost
        schemas = [_footer_schema(p) for p in paths]
    else:
        with ThreadPoolExecutor(max(1, min(FOOTER_THREADS, len(paths)))) as pool:
            schemas = list(pool.map(_footer_schema, paths))
    for path, schema in zip(paths[1:], schemas[1:]):
        diff = schema_difference(schemas[0], schema)
        if diff:
            col, first, other = diff
            raise ExecutionError(
                f"input files {paths[0]} and {path} differ in column {col!r} ({first} in the "
                f"first, {other} in the second): one rewritten file cannot keep both types; "
                "the plan was not run and nothing was written")
    return schemas[0]


def missing_input(paths: Sequence[str]) -> str | None:
    """The first of ``paths`` that no longer exists (after a failed job: was an input
    deleted under the run?), None if all do."""
    return next((p for p in paths if not table_fs.exists(p)), None)
