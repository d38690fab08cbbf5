"""How the executor writes, keys and verifies a rewrite: the strategies it can choose
between, as one frozen value passed down from :func:`engine.spark.executor.execute_plan`
and :func:`engine.spark.rewrite.rewrite` (never a module setting that a caller patches).

The defaults are the product's; the other values are the alternatives that a current
benchmark figure compares with them (``bench/executor/README.md``), or forced paths that
the tests use to check that every way of computing a key gives the same integers.

Example:
>>> ExecutorOptions().group_write, ExecutorOptions().key_function
('packed', 'auto')
>>> ExecutorOptions(group_write="tasks")
Traceback (most recent call last):
...
engine.core.errors.InvalidParameterError: group_write must be one of packed, partition_by, got 'tasks'
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core.errors import InvalidParameterError

#: how a plan of several groups (and no physical partition) is written
#: (:func:`engine.spark.writing.write`)
GROUP_WRITES = ("packed", "partition_by")
#: how Hilbert and Z-order keys are computed (:func:`engine.spark.curve_keys.chosen`)
KEY_FUNCTIONS = ("auto", "expression", "udf")
#: how the ranks of an integral key column are found (:func:`engine.spark.curve_keys.cheap`)
RANKS = ("lookup", "search")
#: how a 2-D Hilbert key is computed (:func:`engine.spark.curve_keys.cheap`)
HILBERT_2D = ("table", "skilling")
#: who sorts and writes each task's rows (:func:`engine.spark.writing.write`,
#: :func:`engine.spark.arrow_write.write`)
WRITERS = ("auto", "spark", "arrow")


@dataclass(frozen=True, slots=True)
class ExecutorOptions:
    """The executor's strategies (defaults: the product's).

    * ``group_write``: a many-group write either sorts each task on ONE long packing
      (group, key) and keeps one open file per group of the task ("packed", used only
      where every group sorts on one date or 32-bit integer column and no task reads more
      than :data:`engine.spark.writing.PACKED_TASK_BYTES`; "partition_by" otherwise), or
      always sorts by (group, key) for Spark's ``partitionBy`` writer ("partition_by").
    * ``verify_from_folder``: the verification reads each written file's group from
      Spark's ``__la_g=i/`` folder, once per file
      (:func:`engine.spark.verification.scan_group_folders`); False: from each row's file
      path (:func:`engine.spark.reading.scan_tagged`).
    * ``key_function``: Hilbert and Z-order keys by native Spark expressions
      ("expression", :mod:`engine.spark.curve_keys`), by one scalar Arrow UDF ("udf",
      :mod:`engine.spark.fitting`), or "auto": the expressions where their chain is short
      (:func:`engine.spark.curve_keys.cheap`) and the plan holds at least
      ``auto_min_rows`` rows, the UDF elsewhere.
    * ``auto_min_rows``: below this many fitted rows "auto" takes the UDF (building the
      expressions' staged plan costs about 0.4-0.5 s more on the driver, while the UDF's
      Arrow round trip costs about 1.5 CPU-s more per million rows).
    * ``ranks``: an integral key column's ranks by one lookup table ("lookup", where its
      fitted boundaries span at most :data:`engine.spark.curve_keys.LOOKUP_SPAN` values)
      or always by the staged binary search ("search").
    * ``hilbert_2d``: a 2-D Hilbert key by a state machine over
      :data:`engine.spark.curve_keys.HILBERT_CHUNK` bits per lookup ("table") or by
      Skilling's transform step by step ("skilling", the only way for 3 or more columns).
    * ``writer``: each task's rows sorted and written by Spark (its sort and parquet-mr's
      writer, "spark") or, after the same shuffle, sorted by pyarrow and written by pyarrow
      with the inputs' exact schema ("arrow", :mod:`engine.spark.arrow_write`; where
      :func:`engine.spark.arrow_write.eligible` allows, Spark's elsewhere), or "auto":
      Arrow for a write of two or more groups, Spark for one (bench/executor/README.md:
      with Arrow, 50 groups cost 1.13x one group against Spark's 1.67x; one group costs
      about 5% more).
    * ``bucketed``: under "expression", the ranks of timestamps, floats and wide integers
      by bucket tables (exact; :func:`engine.spark.curve_keys.bucket_fits`) where they
      fit, else by the binary search.
    """

    group_write: str = "packed"
    verify_from_folder: bool = True
    key_function: str = "auto"
    auto_min_rows: int = 300_000
    ranks: str = "lookup"
    hilbert_2d: str = "table"
    bucketed: bool = True
    writer: str = "auto"

    def __post_init__(self) -> None:
        for name, allowed in (("group_write", GROUP_WRITES), ("key_function", KEY_FUNCTIONS),
                              ("ranks", RANKS), ("hilbert_2d", HILBERT_2D),
                              ("writer", WRITERS)):
            value = getattr(self, name)
            if value not in allowed:
                raise InvalidParameterError(
                    f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        if self.auto_min_rows < 0:
            raise InvalidParameterError(
                f"auto_min_rows must be >= 0, got {self.auto_min_rows}")


#: the product's strategies
DEFAULT_OPTIONS = ExecutorOptions()
