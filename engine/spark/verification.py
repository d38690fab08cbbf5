"""Verify a rewrite before its commit: the written files hold exactly the input rows, each
in its own group (the data-safety rule: never a lost, duplicated, altered or moved row),
at a cost that does not grow with the number of groups (a plan of 1 to 500 groups costs
about the same fixed overhead as one group).

**What is compared.** Per row ``r`` of group ``g``: its hash ``h(r) = xxhash64(columns)``
(the checksum of :mod:`engine.spark.checksum`) and its *tagged* hash
``t(r, g) = xxhash64(h(r), g)``, a second 64-bit hash that depends on the group too.

* Inputs: ONE observation while they stream into the write (``DataFrame.observe``; no
  second read), a constant number of sums whatever the groups: rows ``N``, ``H = sum h``
  and, for plans of two or more groups, ``T = sum t`` (each sum exact: a 64-bit value is
  summed as its signed high and unsigned low 32 bits, two ``bigint`` sums that cannot
  overflow below 2^31 rows, so ANSI mode never trips; recombined on the driver).
* Written files: ONE aggregate of the read-back, grouped by group (a file's group is in
  its name): per group ``n_g``, ``H_g`` and ``T_g``.
* Per group, the input rows ``R_g`` are the snapshot's (its files' footers), known before
  the job.

The commit goes ahead only if ``N = sum R_g``, ``n_g = R_g`` for every group,
``sum H_g = H`` and ``sum T_g = T``, and no written row is outside the plan's groups.

**Why that is as safe as per-group checksums** (comparing ``(n, H)`` per group costs
three conditional sums per group and row, or a second read of the inputs above 8
groups). Let ``I`` and ``O`` be the multisets of (row, group) pairs read and written; the
question is whether ``O != I`` can pass.
- A lost or duplicated row changes ``n_g`` of its group (caught exactly, no probability).
- An altered row (same group, other values) changes ``H`` by ``h(r') - h(r)``: zero only
  if two different rows hash alike, probability about 2^-64 (as before: the per-group
  check had the same 64-bit hash).
- A row written into another group's files leaves ``H`` and ``N`` unchanged, and ``n_g``
  too if another row moves the other way, but changes ``T`` by
  ``t(r, g') - t(r, g) + ...``: a sum of pseudo-random 64-bit values that cancels with
  probability about 2^-64 per fault, as a per-group ``H_g`` would.
- Any mix of the above: ``T`` over the differing pairs is a sum of independent-looking
  64-bit hashes, again zero with probability about 2^-64. Only a ``t`` collision, i.e. an
  ``xxhash64`` collision, passes: the same odds as the per-group check.
A weighted sum (``sum w(g) h`` with a few-bit weight per group) would cost the same but
miss a move between two groups of equal weight with probability 2^-bits; the tagged hash
has no such blind spot. One extra hash per row on each side is the whole price (no
per-group term: 5 sums for any plan of two or more groups, 3 for one group, where no row
can change group and ``T`` adds nothing).

**On a mismatch** (failure only, so its price does not matter) the inputs are read again
in one aggregate with the written files, grouped by (side, group), so the error names the
failing group as before (:func:`check`). A retried stage can only count observed rows
twice: the check then fails and nothing is committed.

Partial progress (``partial_progress_groups``) verifies each committed batch as a job of
its own, so it needs no per-group observation either.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from engine.core.errors import ExecutionError
from engine.spark.checksum import checksum_exprs, format_checksum
from engine.spark.hadoop_files import group_of_file
from engine.spark.jobspec import GROUP_COLUMN, SIDE_COLUMN, GroupSpec, q
from engine.spark.reading import scan_tagged
from engine.spark.writing import session_conf

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, Observation, SparkSession

Checks = dict[int, dict[str, tuple[int, str]]]
#: the row hash observed (a column only between the scan and the observation)
HASH_COLUMN = "__la_row_hash"
#: the tagged hash observed (likewise)
TAG_COLUMN = "__la_tag_hash"
_LOW = 0xFFFFFFFF


@dataclass
class Sums:
    """Rows and the exact sums of the row hash (``h``) and the tagged hash (``t``)."""

    n: int = 0
    h: int = 0
    t: int = 0

    def __add__(self, other: "Sums") -> "Sums":
        return Sums(self.n + other.n, self.h + other.h, self.t + other.t)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "Sums":
        """From the aggregates of :func:`hash_sums` (missing halves count as 0).

        Example (rows hashing to -1 and 2**32 + 5: h = 2**32 + 4):
        >>> Sums.of({"n": 2, "h_hi": -1 + 1, "h_lo": 0xFFFFFFFF + 5})
        Sums(n=2, h=4294967300, t=0)
        """
        def whole(name: str) -> int:
            return int(row.get(f"{name}_hi") or 0) * (1 << 32) + int(row.get(f"{name}_lo") or 0)
        return cls(int(row.get("n") or 0), whole("h"), whole("t"))


def with_hashes(df: "DataFrame", data_cols: Sequence[str], tag: bool) -> "DataFrame":
    """``df`` with ``h`` (and, if ``tag``, ``t``) as columns, each computed once per row: an
    observation evaluates its aggregates without sharing subexpressions, so ``t`` written
    in two sums would be computed twice. (The tag's own cost: bench/executor/README.md.)"""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    df = df.withColumn(HASH_COLUMN, row_hash(data_cols))
    if tag:
        df = df.withColumn(TAG_COLUMN, F.xxhash64(F.col(HASH_COLUMN), F.col(GROUP_COLUMN)))
    return df


def hash_sums(tag: bool) -> list["Column"]:
    """Aggregates ``n``, ``h_hi``/``h_lo`` and (``tag``) ``t_hi``/``t_lo`` over the
    columns of :func:`with_hashes`: the same expressions on both sides."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    h = F.col(HASH_COLUMN)
    out = [F.count(F.lit(1)).alias("n"), F.sum(F.shiftright(h, 32)).alias("h_hi"),
           F.sum(h.bitwiseAND(F.lit(_LOW))).alias("h_lo")]
    if tag:
        t = F.col(TAG_COLUMN)
        out += [F.sum(F.shiftright(t, 32)).alias("t_hi"),
                F.sum(t.bitwiseAND(F.lit(_LOW))).alias("t_lo")]
    return out


def row_hash(data_cols: Sequence[str]) -> "Column":
    """``h(r)``: the checksum's row hash."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    return F.xxhash64(*[F.col(q(c)) for c in data_cols])


def tagged(specs: Sequence[GroupSpec]) -> bool:
    """Does the job need the tagged sum (a row could land in another group)?"""
    return len(specs) > 1


def observe_inputs(df: "DataFrame", data_cols: Sequence[str], tag: bool,
                   ) -> tuple["DataFrame", "Observation"]:
    """``df`` observed: its rows and hash sums (:func:`hash_sums`), gathered as the write
    runs; a constant number of sums whatever the groups."""
    from pyspark.sql import Observation  # pyspark: costly import, deferred

    observation = Observation(f"la-inputs-{uuid.uuid4().hex[:8]}")
    observed_df = with_hashes(df, data_cols, tag).observe(observation, *hash_sums(tag))
    return observed_df.drop(HASH_COLUMN, TAG_COLUMN), observation


def observed(observation: "Observation") -> Sums:
    """The inputs' sums, from an :func:`observe_inputs` observation."""
    return Sums.of(observation.get)


def written_sums(spark: "SparkSession", files: Sequence[str], data_cols: Sequence[str],
                 spark_schema: Any, tag: bool, out_dir: str | None = None,
                 from_folder: bool = True) -> dict[int, Sums]:
    """ONE aggregate over the written files: per group (-1: a file of no group), rows and
    hash sums. Files still in Spark's ``out_dir/__la_g=i/`` folders are read with the
    group from the folder (:func:`scan_group_folders`) unless ``from_folder`` is False
    (:attr:`engine.spark.options.ExecutorOptions.verify_from_folder`), others by their
    paths."""
    if not files:
        return {}
    if from_folder and out_dir is not None and in_group_folders(files, out_dir):
        written = scan_group_folders(spark, spark_schema, data_cols, files, out_dir)
    else:
        groups = [group_of_file(f) for f in files]
        written = scan_tagged(spark, spark_schema, data_cols, files,
                              [-1 if g is None else g for g in groups])
    hashed = with_hashes(written, data_cols, tag)
    # a few rows per group: one reduce task (the session's shuffle partitions, 8 by default,
    # would each start a task for almost nothing)
    with session_conf(spark, {"spark.sql.shuffle.partitions": "1"}):
        rows = hashed.groupBy(GROUP_COLUMN).agg(*hash_sums(tag)).collect()
    return {int(r[GROUP_COLUMN]): Sums.of(r.asDict()) for r in rows}


def in_group_folders(files: Sequence[str], out_dir: str) -> bool:
    """Is every file directly in a ``out_dir/__la_g=i/`` folder (as a write without a
    physical partition leaves them)?

    Example:
    >>> in_group_folders(["/o/__la_g=3/part-0.parquet", "/o/__la_g=12/part-1.parquet"], "/o")
    True
    >>> in_group_folders(["/o/__la_g=3/__la_part=x/part-0.parquet"], "/o/")
    False
    """
    base = out_dir.rstrip("/") + "/"
    return all(f.startswith(base) and _GROUP_FOLDER.fullmatch(f[len(base):]) for f in files)


_GROUP_FOLDER = re.compile(rf"{GROUP_COLUMN}=\d+/[^/]+")


def scan_group_folders(spark: "SparkSession", spark_schema: Any, names: Sequence[str],
                       files: Sequence[str], out_dir: str) -> "DataFrame":
    """ONE scan of ``files`` (each in an :func:`in_group_folders` folder): the columns
    ``names`` and each row's group, which Spark reads from the folder's name once per file.
    The per-row lookup of the file's path (:func:`engine.spark.reading.scan_tagged`) is
    planned anew for every run's paths; this scan is the same plan on every run (the two
    are compared in bench/executor/README.md)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred
    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = StructType(list(spark_schema.fields) + [StructField(GROUP_COLUMN, IntegerType())])
    raw = spark.read.schema(schema).option("basePath", out_dir).parquet(*files)
    return raw.select(*[F.col(q(c)) for c in names], F.col(GROUP_COLUMN))


def mismatch(specs: Sequence[GroupSpec], seen: Sums, out: Mapping[int, Sums],
             tag: bool) -> str | None:
    """Why the written files do not hold the input rows (module docstring), or None.

    Example (two groups of 2 and 1 rows; a row moved between them keeps ``n`` and ``h``):
    >>> from types import SimpleNamespace as G
    >>> specs = [G(index=0, rows=2), G(index=1, rows=1)]
    >>> seen = Sums(3, 30, 300)
    >>> mismatch(specs, seen, {0: Sums(2, 20, 250), 1: Sums(1, 10, 50)}, True) is None
    True
    >>> mismatch(specs, seen, {0: Sums(2, 20, 240), 1: Sums(1, 10, 50)}, True)
    'the tagged checksum differs (a row moved to another group or altered): inputs 300, written 290'
    >>> mismatch(specs, seen, {0: Sums(1, 10, 100), 1: Sums(2, 20, 200)}, True)
    'group 0: the snapshot says 2 input rows, 1 written'
    """
    total = sum(out.values(), Sums())
    expected = sum(s.rows for s in specs)
    if seen.n != expected:
        return f"the input files held {seen.n} rows while written, the snapshot says {expected}"
    for s in specs:
        got = out.get(s.index, Sums()).n
        if got != s.rows:
            return f"group {s.index}: the snapshot says {s.rows} input rows, {got} written"
    if total.n != seen.n or total.h != seen.h:
        return (f"inputs {seen.n} rows (checksum {seen.h}), written {total.n} rows "
                f"(checksum {total.h})")
    if tag and total.t != seen.t:
        return (f"the tagged checksum differs (a row moved to another group or altered): "
                f"inputs {seen.t}, written {total.t}")
    return None


def verify(spark: "SparkSession", specs: Sequence[GroupSpec], seen: Sums, files: Sequence[str],
           data_cols: Sequence[str], spark_schema: Any,
           read_again: Callable[[], "DataFrame"], out_dir: str | None = None,
           from_folder: bool = True) -> Checks:
    """Compare the observed inputs ``seen`` with ONE aggregate of the written files; raise
    :class:`ExecutionError` naming the failing group (a second read of the inputs,
    ``read_again()``, only then) or return each group's (rows, checksum). ``out_dir``: the
    write's folder, when ``files`` are still in its group folders; ``from_folder``: read
    their group from it (:func:`written_sums`)."""
    tag = tagged(specs)
    out = written_sums(spark, files, data_cols, spark_schema, tag, out_dir, from_folder)
    stray = out.get(-1)
    if stray:
        raise ExecutionError(f"rows of files outside the plan's groups were written "
                             f"({stray.n} rows); nothing was committed")
    problem = mismatch(specs, seen, out, tag)
    if problem:
        check(specs, aggregate(spark, read_again(), files, data_cols, spark_schema))
        raise ExecutionError(f"verification failed: {problem}; nothing was committed")
    got = {s.index: out.get(s.index, Sums()) for s in specs}
    return {i: {side: (v.n, str(v.h)) for side in ("in", "out")} for i, v in got.items()}


def aggregate(spark: "SparkSession", inputs: "DataFrame | None", files: Sequence[str],
              data_cols: Sequence[str], spark_schema: Any) -> Checks:
    """ONE aggregate over the written files and the inputs read again: rows and checksum
    per (side, group). Returns {group: {"in": (rows, checksum), "out": ...}}. Used after a
    mismatch, to name the group."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    cols = [F.col(q(c)) for c in data_cols]
    both = None
    if inputs is not None:
        both = inputs.select(*cols, F.col(GROUP_COLUMN), F.lit(0).alias(SIDE_COLUMN))
    if files:
        groups = [group_of_file(f) for f in files]
        written = scan_tagged(spark, spark_schema, data_cols, files,
                              [-1 if g is None else g for g in groups])
        written = written.select(*cols, F.col(GROUP_COLUMN), F.lit(1).alias(SIDE_COLUMN))
        both = written if both is None else both.unionByName(written)
    if both is None:
        return {}
    rows = both.groupBy(SIDE_COLUMN, GROUP_COLUMN).agg(*checksum_exprs(data_cols)).collect()
    out: Checks = {}
    for r in rows:
        side = "in" if int(r[SIDE_COLUMN]) == 0 else "out"
        out.setdefault(int(r[GROUP_COLUMN]), {})[side] = format_checksum(r.asDict())
    return out


def check(specs: Sequence[GroupSpec], checks: Checks) -> None:
    """Raise :class:`ExecutionError` naming the first group whose files do not match."""
    stray = checks.get(-1)
    if stray:
        raise ExecutionError(f"rows of files outside the plan's groups were read or written "
                             f"({stray}); nothing was committed")
    for s in specs:
        got = checks.get(s.index, {})
        rows_in, sum_in = got.get("in", (0, "0"))
        rows_out, sum_out = got.get("out", (0, "0"))
        if rows_in != s.rows:
            raise ExecutionError(
                f"group {s.index}: the input files hold {rows_in} rows but the snapshot "
                f"says {s.rows}; the table's metadata does not match its files")
        if rows_out != rows_in or sum_out != sum_in:
            raise ExecutionError(
                f"group {s.index}: verification failed: input {rows_in} rows (checksum "
                f"{sum_in}), written {rows_out} rows (checksum {sum_out}); "
                "nothing was committed")
