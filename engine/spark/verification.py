"""Verify a rewrite before its commit: per group, the rows and the order-independent
checksum (:mod:`engine.spark.checksum`) of the input files equal those of the files
written (the data-safety rule: never a lost, duplicated or altered row).

The written files are read back in ONE aggregate. The inputs' side is observed while they
stream into the write (``DataFrame.observe``: no second read of the inputs) when the job
has at most :data:`OBSERVE_MAX_GROUPS` groups, as it costs a comparison per group and row;
above that the inputs are read again in the same aggregate as the written files. A
retried stage can only count rows twice: the check then fails and nothing is committed.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Sequence

from engine.core.errors import ExecutionError
from engine.spark.checksum import checksum_exprs, format_checksum
from engine.spark.hadoop_files import group_of_file
from engine.spark.jobspec import GROUP_COLUMN, SIDE_COLUMN, GroupSpec, q
from engine.spark.reading import scan_tagged

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Observation, SparkSession

Checks = dict[int, dict[str, tuple[int, str]]]
#: jobs of at most this many groups observe their inputs' checksums while writing
OBSERVE_MAX_GROUPS = 8
#: the row hash observed (a column only between the scan and the observation)
HASH_COLUMN = "__la_row_hash"


def observe_inputs(df: "DataFrame", specs: Sequence[GroupSpec], data_cols: Sequence[str],
                   ) -> tuple["DataFrame", "Observation"]:
    """``df`` observed: rows and checksum halves per group, gathered as the write runs."""
    from pyspark.sql import Observation  # pyspark: costly import, deferred
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    # the row's hash once, as a column: inlined in every per-group aggregate it was
    # computed 2 x groups times per row (no common subexpressions in an observation)
    df = df.withColumn(HASH_COLUMN, F.xxhash64(*[F.col(q(c)) for c in data_cols]))
    h = F.col(HASH_COLUMN)
    g = F.col(GROUP_COLUMN)
    exprs = []
    for s in specs:
        mine = g == F.lit(s.index)
        exprs += [F.sum(F.when(mine, F.lit(1)).otherwise(F.lit(0))).alias(f"n_{s.index}"),
                  F.sum(F.when(mine, F.shiftright(h, 32))).alias(f"h_hi_{s.index}"),
                  F.sum(F.when(mine, h.bitwiseAND(F.lit(0xFFFFFFFF)))).alias(f"h_lo_{s.index}")]
    observation = Observation(f"la-inputs-{uuid.uuid4().hex[:8]}")
    return df.observe(observation, *exprs).drop(HASH_COLUMN), observation


def observed(observation: "Observation", specs: Sequence[GroupSpec]) -> Checks:
    """The inputs' side of the checks, from an :func:`observe_inputs` observation."""
    got = observation.get
    return {s.index: {"in": format_checksum({"n": got.get(f"n_{s.index}"),
                                             "h_hi": got.get(f"h_hi_{s.index}"),
                                             "h_lo": got.get(f"h_lo_{s.index}")})}
            for s in specs}


def aggregate(spark: "SparkSession", inputs: "DataFrame | None", files: Sequence[str],
              data_cols: Sequence[str], spark_schema: Any) -> Checks:
    """ONE aggregate over the written files and (unless None: observed) the inputs: rows
    and checksum per (side, group). Returns {group: {"in": (rows, checksum), "out": ...}}."""
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
