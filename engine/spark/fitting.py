"""Fitted orderings inside the job: Hilbert, Z-order, Qd-tree and PAW keys.

A fitted group's ordering (:func:`engine.layout.groups.ordering_for_group`) is learned on a
sample of its rows' key columns (ONE Spark job for all fitted groups of a plan), then its
key is computed on the executors: Hilbert and Z-order keys over integral columns (ints,
dates) as native Spark expressions (:mod:`engine.spark.curve_keys`), the others by ONE
scalar Arrow UDF for all groups.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.layout.base import ordering_from_json
from engine.layout.groups import ordering_for_group
from engine.spark import curve_keys
from engine.spark.jobspec import FITTED, GROUP_COLUMN, KEY_COLUMN, LEAVES, GroupSpec, q
from engine.spark.options import DEFAULT_OPTIONS, ExecutorOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from engine.table.model import TableSchema

SAMPLE_ROWS = 100_000
SAMPLE_SEED = 20240917


def sample_fitted(df: "DataFrame", specs: Sequence[GroupSpec], schema: "TableSchema") -> Any:
    """ONE job: a sample of ~SAMPLE_ROWS rows per fitted group, only its key columns."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    fitted = [s for s in specs if s.group.layout in FITTED]
    cols = sorted({c for s in fitted for c in s.group.columns}, key=schema.names.index)
    g = F.col(GROUP_COLUMN)
    wanted = {s.index: min(1.0, SAMPLE_ROWS / max(1, s.rows)) for s in fitted}
    fraction = F.try_element_at(F.array(*[F.lit(wanted.get(i, 0.0))
                                          for i in range(max(wanted) + 1)]), (g + 1).cast("int"))
    picked = df.select(g, *[F.col(q(c)) for c in cols]).where(F.rand(SAMPLE_SEED) < fraction)
    return picked.toArrow()


def fit_group(spec: GroupSpec, sample: Any, schema: "TableSchema", rows_per_file: float) -> None:
    """Fit the group's ordering (:func:`ordering_for_group`) on its rows of the sample.

    A Qd-tree's ``min_leaf_rows`` defaults to one output file; its key is the fine key
    (leaf, rank of the first column), so a leaf larger than a file can be cut along the
    first column.
    """
    import pyarrow.compute as pc  # beside pyarrow: only when a fitted group runs

    group = spec.group
    cols = list(group.columns)
    types = {c: schema.type_of(c) for c in cols}
    mine = sample.filter(pc.equal(sample.column(GROUP_COLUMN), spec.index))
    data = {c: logical_types.encode_arrow(types[c], mine.column(c))[0] for c in cols}
    ordering = ordering_for_group(group, types, data, group_rows=spec.rows,
                                  default_leaf_rows=max(1, round(rows_per_file)))
    spec.fit = {"sample_rows": mine.num_rows}
    if group.layout in LEAVES:
        if group.layout == "qdtree":
            spec.fit["min_leaf_rows"] = ordering.min_leaf_rows
        spec.fit["leaves"] = int(ordering.n_leaves_)
        keys = np.asarray(ordering.fine_keys(data))
    else:
        keys = np.asarray(ordering.keys(data))
    spec.key_dtype = "long" if np.issubdtype(keys.dtype, np.integer) else "double"
    spec.ordering_json = ordering.to_json()
    spec.sample_keys = keys


def with_key(df: "DataFrame", specs: Sequence[GroupSpec], schema: "TableSchema",
              dtype: str, key_function: str | None = None,
              options: ExecutorOptions = DEFAULT_OPTIONS) -> "DataFrame":
    """Append the fitted groups' key column (rows of other groups get 0: they are ordered
    by their own columns).

    ``key_function`` (default ``options.key_function``, "auto") picks the way
    (:func:`curve_keys.chosen`): native Spark expressions (:mod:`engine.spark.curve_keys`)
    when every fitted group is a Hilbert or Z-order curve they cover ("expression") or
    cover cheaply ("auto": integral columns, ranks by lookup tables); otherwise ONE scalar
    Arrow UDF that receives the
    group id and the key columns and dispatches per group (each group's ordering travels
    as JSON in the closure and is rebuilt once per worker). Both give the same integers.
    """
    function = key_function or options.key_function
    if function not in curve_keys.KEY_FUNCTIONS:
        raise InvalidParameterError(f"key_function must be one of "
                                    f"{', '.join(curve_keys.KEY_FUNCTIONS)}, got {function!r}")
    fitted = [s for s in specs if s.group.layout in FITTED]
    if curve_keys.chosen(fitted, schema, function, options) == "expression":
        return curve_keys.with_curve_keys(df, specs, schema, options)
    return _with_udf_key(df, specs, schema, dtype)


def _with_udf_key(df: "DataFrame", specs: Sequence[GroupSpec], schema: "TableSchema",
                  dtype: str) -> "DataFrame":
    """:func:`with_key` by ONE scalar Arrow UDF (Qd-tree, PAW, strings)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred
    from pyspark.sql.functions import ArrowUDFType  # pyspark: costly import, deferred
    from pyspark.sql.types import DoubleType, LongType

    fitted = [s for s in specs if s.group.layout in FITTED]
    cols = sorted({c for s in fitted for c in s.group.columns}, key=schema.names.index)
    ltypes = {c: schema.type_of(c) for c in cols}
    plans = {s.index: (s.ordering_json, list(s.group.columns), s.group.layout in LEAVES)
             for s in fitted}
    np_type = np.int64 if dtype == "long" else np.float64
    holder: dict[int, Any] = {}

    def compute(groups, *arrays):  # executed in the Python workers
        g = np.asarray(groups.to_numpy(zero_copy_only=False))
        out = np.zeros(len(g), dtype=np_type)
        by_name = dict(zip(cols, arrays))
        for gid in np.unique(g):
            if int(gid) not in plans:
                continue
            spec_json, names, fine = plans[int(gid)]
            if gid not in holder:
                holder[gid] = ordering_from_json(spec_json)
            idx = np.flatnonzero(g == gid)
            take = pa.array(idx)
            data = {c: logical_types.encode_arrow(ltypes[c], by_name[c].take(take))[0]
                    for c in names}
            ordering = holder[gid]
            keys = ordering.fine_keys(data) if fine else ordering.keys(data)
            out[idx] = np.asarray(keys).astype(np_type, copy=False)
        return pa.array(out)

    key_type = LongType() if dtype == "long" else DoubleType()
    with warnings.catch_warnings():  # "prefer type hints": *arrays cannot carry them
        warnings.simplefilter("ignore", UserWarning)
        udf = F.arrow_udf(compute, key_type, ArrowUDFType.SCALAR)
    return df.withColumn(KEY_COLUMN, udf(F.col(GROUP_COLUMN), *[F.col(q(c)) for c in cols]))

