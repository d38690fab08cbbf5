"""A rewrite never changes a type: the new files carry the input's
exact Arrow schema.

Spark reads and writes Parquet through its own type system: one string type (a
``large_string`` comes back ``string``), TIMESTAMP in UTC microseconds (a ``timestamp[ms]``
comes back ``[us]``, a ``Europe/Paris`` time zone as ``UTC``), every field nullable, no field
metadata. Two steps keep the input's schema:

1. :func:`refuse_unsupported`, BEFORE anything is written: a column whose type Spark has no
   equivalent for (unsigned integers, half floats, times of day, durations, intervals,
   nanosecond timestamps, 256-bit decimals, the null type, extension types) cannot pass
   through Spark without a change of type or value, so the run is refused with one line
   naming the column and its type.
2. :func:`restore_files`, AFTER Spark wrote and BEFORE the verification: a written file
   whose Arrow fields differ from the input's is rewritten by pyarrow, row group by row
   group (same row groups, same compression), with the input's schema. The cast is a safe
   one (it fails rather than truncate a value or put a null into a non-null column) and
   the restored files are what the verification then reads: rows and checksum of the
   files that get committed are checked, not those of Spark's intermediate output. Files
   whose fields already match (the common case: plain types) are left as Spark wrote them,
   which one footer read on the driver decides (Spark writes every file of a job with one
   schema).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pyarrow.types as pat

from engine.core.errors import ExecutionError
from engine.table import fs as table_fs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")

#: (test, why Spark cannot carry it) for the types a rewrite must refuse
_UNSUPPORTED = (
    (pat.is_unsigned_integer, "Spark has no unsigned integers"),
    (pat.is_float16, "Spark has no half-precision float"),
    (lambda t: pat.is_time(t), "Spark has no time-of-day type"),
    (pat.is_duration, "Spark cannot write durations to Parquet"),
    (pat.is_interval, "Spark cannot write intervals to Parquet"),
    (lambda t: pat.is_timestamp(t) and t.unit == "ns", "Spark keeps microseconds only"),
    (pat.is_map, "Spark cannot hash a map, and the rewrite's row checksum hashes every column"),
    (lambda t: pat.is_decimal(t) and t.precision > 38, "Spark decimals hold 38 digits"),
    (pat.is_null, "Spark cannot write a column of the null type"),
    (lambda t: isinstance(t, pa.ExtensionType), "Spark does not know Arrow extension types"),
)


def _children(t: pa.DataType) -> Iterable[pa.DataType]:
    return (t.field(i).type for i in range(t.num_fields)) if t.num_fields else ()


def unsupported(t: pa.DataType) -> str | None:
    """Why Spark cannot carry ``t`` (or a type nested in it) unchanged, else None.

    >>> unsupported(pa.uint32())
    'Spark has no unsigned integers'
    >>> unsupported(pa.list_(pa.time64("us")))
    'Spark has no time-of-day type'
    >>> unsupported(pa.timestamp("ms", tz="Europe/Paris")) is None
    True
    """
    for test, why in _UNSUPPORTED:
        if test(t):
            return why
    for child in _children(t):
        why = unsupported(child)
        if why:
            return why
    return None


def refuse_unsupported(schema: pa.Schema, where: str) -> None:
    """Raise :class:`ExecutionError` naming the first column Spark cannot write back with
    its type, before anything is written.

    >>> refuse_unsupported(pa.schema([("k", pa.int64()), ("u", pa.uint32())]), "/t/a.parquet")
    Traceback (most recent call last):
    ...
    engine.core.errors.ExecutionError: column 'u' of /t/a.parquet has type uint32, which a Spark rewrite cannot keep (Spark has no unsigned integers); the plan was not run and nothing was written
    """
    int96: set[str] | None = None
    for f in schema:
        why = unsupported(f.type)
        if why and _has_ns_timestamp(f.type):
            int96 = _int96_columns(where) if int96 is None else int96
            if any(c == f.name or c.startswith(f.name + ".") for c in int96):
                raise ExecutionError(
                    f"column {f.name!r} of {where} holds INT96 timestamps (the legacy Hive, "
                    "Impala and old Spark encoding), which a Spark rewrite cannot keep (it "
                    "writes INT64 microseconds); rewrite the files with INT64 timestamps "
                    "first; the plan was not run and nothing was written")
        if why:
            raise ExecutionError(
                f"column {f.name!r} of {where} has type {f.type}, which a Spark rewrite "
                f"cannot keep ({why}); the plan was not run and nothing was written")


def _int96_columns(path: str) -> set[str]:
    """Paths (``a`` or ``a.b.c``) of the Parquet file's leaf columns stored as INT96, which
    pyarrow reads as ``timestamp[ns]``; empty when the footer cannot be read (the caller's
    message then names the Arrow type)."""
    try:
        fs, inner = table_fs.filesystem(str(path))
        with fs.open_input_file(inner) as handle:
            schema = pq.ParquetFile(handle).schema
    except (OSError, ValueError, pa.ArrowException):
        return set()
    return {schema.column(i).path for i in range(len(schema))
            if schema.column(i).physical_type == "INT96"}


def _has_ns_timestamp(t: pa.DataType) -> bool:
    return (pat.is_timestamp(t) and t.unit == "ns") or any(_has_ns_timestamp(c) for c in _children(t))


def read_schema(path: str) -> pa.Schema:
    """The Arrow schema of a Parquet file (its footer), on any file system the table uses."""
    fs, inner = table_fs.filesystem(path)
    return pq.read_schema(inner, filesystem=fs)


def differences(expected: pa.Schema, got: pa.Schema) -> list[str]:
    """The fields of ``got`` that are not exactly ``expected``'s (type, unit, time zone,
    nullability, field metadata), as ``name: expected -> got``.

    >>> differences(pa.schema([pa.field("s", pa.large_string(), False)]),
    ...             pa.schema([("s", pa.string())]))
    ['s: large_string not null -> string']
    """
    out = []
    for f in expected:
        i = got.get_field_index(f.name)
        other = got.field(i) if i >= 0 else None
        if other is None or not other.equals(f, check_metadata=True):
            out.append(f"{f.name}: {_spell(f)} -> {_spell(other)}")
    return out


def _spell(f: pa.Field | None) -> str:
    if f is None:
        return "missing"
    meta = f" {dict(f.metadata)}" if f.metadata else ""
    return f"{f.type}{'' if f.nullable else ' not null'}{meta}"


def restore_file(path: str, schema: pa.Schema) -> bool:
    """Rewrite one Parquet file with ``schema`` (a safe cast of every row group, same row
    groups and compression); False when its fields already match. Raises ArrowInvalid when
    a value does not fit (never happens for Spark's output of an input of this schema: the
    caller's verification stays the judge)."""
    fs, inner = table_fs.filesystem(path)
    source = pq.ParquetFile(inner, filesystem=fs)
    if not differences(schema, source.schema_arrow):
        return False
    meta = source.metadata
    compression = (meta.row_group(0).column(0).compression.lower()
                   if meta.num_row_groups and meta.num_columns else "snappy")
    tmp = f"{inner.rsplit('/', 1)[0]}/.restore-{inner.rsplit('/', 1)[1]}"
    names = [f.name for f in schema if f.name in source.schema_arrow.names]
    target = pa.schema([schema.field(n) for n in names], metadata=schema.metadata)
    with pq.ParquetWriter(tmp, target, filesystem=fs, compression=compression) as writer:
        for i in range(meta.num_row_groups):
            part = source.read_row_group(i, columns=names)
            writer.write_table(part.cast(target), row_group_size=max(1, part.num_rows))
    fs.move(tmp, inner)
    # Hadoop's local file system keeps a checksum beside each file it wrote (``.name.crc``):
    # it describes Spark's bytes, not these, and would make every later read fail
    crc = f"{inner.rsplit('/', 1)[0]}/.{inner.rsplit('/', 1)[1]}.crc"
    if fs.get_file_info(crc).type != pafs.FileType.NotFound:
        fs.delete_file(crc)
    return True


def _restore_many(schema: pa.Schema):
    def run(paths: Iterable[str]) -> list[tuple[str, bool]]:
        return [(p, restore_file(p, schema)) for p in paths]
    return run


def on_executors(spark: "SparkSession", paths: Sequence[str],
                 run: Callable[[Iterable[str]], list[T]], failed: str) -> list[T]:
    """``run`` over ``paths`` on the executors (a few files per task), its results collected.

    A worker's error reaches the driver wrapped in Spark's and Python's stack; it becomes one
    :class:`ExecutionError`: ``failed`` (what could not be done), the worker's own error line
    and "nothing was committed" (the caller's cleanup removes what was written)."""
    sc = spark.sparkContext
    slices = max(1, min(len(paths), sc.defaultParallelism * 4))
    try:
        return sc.parallelize(list(paths), slices).mapPartitions(run).collect()
    except Exception as exc:  # noqa: BLE001 - Spark wraps the worker's error; name it once
        raise ExecutionError(f"{failed} ({worker_error(str(exc))}); nothing was committed") from None


def worker_error(text: str) -> str:
    """The line of a Spark job's failure that names the worker's error.

    >>> worker_error("Py4JJavaError\\n  at x\\npyarrow.lib.ArrowInvalid: bad cast\\n  at y")
    'pyarrow.lib.ArrowInvalid: bad cast'
    >>> worker_error("")
    ''
    """
    lines = text.strip().splitlines()
    last = next((t for t in reversed(lines) if "Error" in t or "Invalid" in t),
                lines[-1] if lines else "")
    return last.strip()


def restore_files(spark: "SparkSession", files: Sequence[str], schema: pa.Schema) -> int:
    """Give every written file ``schema`` (on the executors, a few files per task); returns
    how many were rewritten. Skipped (no Spark job) when the first file already matches."""
    if not files or not differences(schema, read_schema(files[0])):
        return 0
    done = on_executors(spark, files, _restore_many(schema),
                        "the written files could not be given the table's exact types")
    return sum(1 for _, changed in done if changed)
