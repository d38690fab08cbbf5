"""Hilbert and Z-order keys as Spark expressions (engine/spark/curve_keys.py) equal the
Arrow UDF's and the numpy ordering's, row for row: nulls, ties, negative numbers, dates,
timestamps (with and without a time zone), several groups in one chain; decimals and
strings go to the UDF and agree too."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core import logical_types
from engine.core.errors import InvalidParameterError
from engine.layout.base import ordering_from_json
from engine.policy.base import PlanGroup
from engine.spark import curve_keys, fitting
from engine.spark.jobspec import GROUP_COLUMN, KEY_COLUMN, GroupSpec
from engine.spark.reading import spark_schema_of
from engine.table.model import TableSchema

pytestmark = pytest.mark.spark

EPOCH = dt.date(1970, 1, 1)


def _ltype(t: pa.DataType) -> str:
    return logical_types.logical_type_of_arrow(t)


def _keys_three_ways(spark, tmp_path, table: pa.Table, groups, sample_mask=None):
    """Keys of every row by the expressions, the UDF and numpy (the fitted ordering's
    ``keys`` on the encoded rows). ``table`` has an int column "g" (the row's group);
    ``groups``: [(layout, columns, bits)] for groups 0, 1, ...; each ordering is fitted on
    the rows where ``sample_mask`` (default all) holds, through Spark as the executor does."""
    path = tmp_path / f"data-{abs(hash(str(table.schema)))}.parquet"
    pq.write_table(table, path)
    df = spark.read.schema(spark_schema_of(table.schema)).parquet(str(path))
    df = df.withColumn(GROUP_COLUMN, df["g"].cast("int"))
    schema = TableSchema(tuple((f.name, _ltype(f.type)) for f in table.schema))
    specs = [GroupSpec(i, PlanGroup((), layout, tuple(cols),
                                    layout_params={} if bits is None else {"bits": bits}),
                       [], int(np.sum(np.asarray(table["g"]) == i)), 0)
             for i, (layout, cols, bits) in enumerate(groups)]
    sample = df.toArrow()
    if sample_mask is not None:
        sample = sample.filter(pa.array(sample_mask))
    for s in specs:
        fitting.fit_group(s, sample, schema, 1000)
    out = {}
    for how in ("expression", "udf"):
        keyed = fitting.with_key(df, specs, schema, "long", key_function=how)
        rows = keyed.select("row", KEY_COLUMN).orderBy("row").toArrow()
        out[how] = np.asarray(rows[KEY_COLUMN].to_numpy(), dtype=np.int64)
    data = df.orderBy("row").toArrow()
    expected = np.zeros(table.num_rows, dtype=np.int64)
    gcol = np.asarray(data["g"].to_numpy(zero_copy_only=False))
    for s in specs:
        mine = gcol == s.index
        enc = {c: logical_types.encode_arrow(schema.type_of(c), data.column(c))[0][mine]
               for c in s.group.columns}
        expected[mine] = ordering_from_json(s.ordering_json).keys(enc)
    return out["expression"], out["udf"], expected, specs, schema


def test_hand_made_hilbert_keys_with_nulls_ties_and_negatives(spark, tmp_path):
    """2-D Hilbert, bits 2 (3 boundaries per column), hand-checked cells: x ranks through
    boundaries [-5, 0, 7], y through [1, 2, 3]; NULL and NaN rank last (cell 3)."""
    x = [-10.0, -5.0, 0.0, 7.0, 100.0, None, float("nan"), 0.0]
    y = [1, 2, 3, 4, None, 1, 2, 3]
    table = pa.table({"row": pa.array(range(8), pa.int64()), "g": pa.array([0] * 8, pa.int32()),
                      "x": pa.array(x, pa.float64()), "y": pa.array(y, pa.int64())})
    fit_mask = [False, True, True, True, False, False, False, False]
    # fitted on x = -5, 0, 7 and y = 2, 3, 4: boundaries x [-5, 0, 7], y [2, 3, 4]
    expr, udf, expected, specs, _ = _keys_three_ways(
        spark, tmp_path, table, [("hilbert", ("x", "y"), 2)], fit_mask)
    codecs = specs[0].ordering_json["state"]["codecs"]
    assert codecs[0]["boundaries"] == [-5.0, 0.0, 7.0] and codecs[1]["boundaries"] == [2, 3, 4]
    # ranks: x -> 0 1 2 3 3 3 3 2; y -> 0 1 2 3 3 0 1 2 (NULL last); scaled r*4//4 = r
    # the 4x4 curve, cells (x, y) in visiting order: (0,0) (1,0) (1,1) (0,1) (0,2) (0,3)
    # (1,3) (1,2) (2,2) (2,3) (3,3) (3,2) (3,1) (2,1) (2,0) (3,0), each next to the last
    cell = {(0, 0): 0, (1, 1): 2, (2, 2): 8, (3, 3): 10, (3, 0): 15, (3, 1): 12}
    want = [cell[(0, 0)], cell[(1, 1)], cell[(2, 2)], cell[(3, 3)], cell[(3, 3)],
            cell[(3, 0)], cell[(3, 1)], cell[(2, 2)]]
    assert expected.tolist() == want
    assert expr.tolist() == want and udf.tolist() == want


def test_hand_made_zorder_keys_over_dates_and_timestamps(spark, tmp_path):
    """Z-order over a date and a timestamp, bits 1 (one boundary each): the key is
    ``2 * (date >= its boundary) + (timestamp >= its boundary)``."""
    days = [EPOCH + dt.timedelta(days=d) for d in (-400, -1, 0, 5, 9000)]
    stamps = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1970, 1, 1),
              dt.datetime(2024, 2, 29, 12, 0, 0, 1), None, dt.datetime(1900, 1, 1)]
    table = pa.table({"row": pa.array(range(5), pa.int64()), "g": pa.array([0] * 5, pa.int32()),
                      "d": pa.array(days, pa.date32()),
                      "t": pa.array(stamps, pa.timestamp("us"))})
    expr, udf, expected, specs, _ = _keys_three_ways(
        spark, tmp_path, table, [("zorder", ("d", "t"), 1)])
    bd = specs[0].ordering_json["state"]["codecs"][0]["boundaries"]
    bt = specs[0].ordering_json["state"]["codecs"][1]["boundaries"]
    assert bd == [0.0] and bt == [0.0]  # the median of each (NULL left out of the fit)
    # d >= 0: rows 2, 3, 4; t >= epoch: rows 1, 2, 3 (NULL last)
    want = [0, 1, 3, 3, 2]
    assert expected.tolist() == want and expr.tolist() == want and udf.tolist() == want


values = {
    # within +-2**53: beyond it engine.core.logical_types.encode_arrow's safe cast to
    # double raises (ArrowInvalid), in the fitting and the UDF alike (reported, not fixed here)
    "int": st.one_of(st.none(), st.integers(-(1 << 53), 1 << 53), st.integers(-3, 3)),
    "float": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64),
                       st.sampled_from([0.0, -0.0, 1.5, -1.5])),
    "decimal": st.one_of(st.none(), st.decimals(min_value=-10 ** 8, max_value=10 ** 8,
                                                places=4, allow_nan=False)),
    "date": st.one_of(st.none(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
                      st.sampled_from([EPOCH, dt.date(1969, 12, 31)])),
    "timestamp": st.one_of(st.none(), st.datetimes(dt.datetime(1, 1, 2), dt.datetime(9999, 12, 30)),
                           st.sampled_from([dt.datetime(1970, 1, 1)])),
    "bool": st.one_of(st.none(), st.booleans()),
}
arrow_types = {"int": pa.int64(), "float": pa.float64(), "decimal": pa.decimal128(14, 4),
               "date": pa.date32(), "timestamp": pa.timestamp("us"), "bool": pa.bool_()}


@st.composite
def tables(draw):
    """A table of 1-3 key columns of random types, 1-2 groups (curve, columns, bits each),
    values drawn with many ties, fitted on a random part of the rows."""
    kinds = draw(st.lists(st.sampled_from(sorted(values)), min_size=1, max_size=3))
    n = draw(st.integers(1, 40))
    cols = {f"c{i}": draw(st.lists(values[k], min_size=n, max_size=n))
            for i, k in enumerate(kinds)}
    if draw(st.booleans()):  # ties: repeat the first rows
        k = max(1, n // 3)
        cols = {c: (v[:k] * (n // k + 1))[:n] for c, v in cols.items()}
    arrays = {c: pa.array(v, arrow_types[k]) for (c, v), k in zip(cols.items(), kinds)}
    if "timestamp" in kinds and draw(st.booleans()):  # a timestamp with a time zone
        i = kinds.index("timestamp")
        arrays[f"c{i}"] = arrays[f"c{i}"].cast(pa.timestamp("us", tz="UTC"))
    n_groups = draw(st.integers(1, 2))
    g = draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n))
    groups = []
    for _ in range(n_groups):
        layout = draw(st.sampled_from(["hilbert", "zorder"]))
        names = draw(st.permutations(list(arrays)))[:draw(st.integers(1, len(arrays)))]
        # few bits: each bit is a staged projection of the binary search and the curve
        # (the default 16 bits are not drawn: their plan takes minutes to compile)
        bits = draw(st.integers(1, min(5, 63 // len(names))))
        groups.append((layout, tuple(names), bits))
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not any(mask):
        mask = [True] * n
    table = pa.table({"row": pa.array(range(n), pa.int64()), "g": pa.array(g, pa.int32()),
                      **arrays})
    return table, groups, mask


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=tables())
def test_expression_udf_and_numpy_keys_agree_on_random_tables(spark, tmp_path_factory, case):
    table, groups, mask = case
    expr, udf, expected, _, _ = _keys_three_ways(
        spark, tmp_path_factory.mktemp("ck"), table, groups, mask)
    assert udf.tolist() == expected.tolist()
    assert expr.tolist() == expected.tolist()


def test_decimals_stay_on_the_udf(spark, tmp_path):
    """Spark's decimal-to-double cast and pyarrow's differ in the last bit on this value
    (the property test found it): its rank would differ, so decimals take the UDF."""
    table = pa.table({"row": pa.array([0], pa.int64()), "g": pa.array([0], pa.int32()),
                      "m": pa.array([decimal.Decimal("28958385.7843")], pa.decimal128(14, 4))})
    expr, udf, expected, specs, schema = _keys_three_ways(
        spark, tmp_path, table, [("hilbert", ("m",), 1)])
    assert not curve_keys.expressible(specs[0], schema)
    assert expr.tolist() == udf.tolist() == expected.tolist() == [1]


def test_strings_and_wide_one_column_curves_stay_on_the_udf(spark, tmp_path):
    table = pa.table({"row": pa.array(range(4), pa.int64()), "g": pa.array([0, 0, 1, 1], pa.int32()),
                      "s": pa.array(["b", None, "a", "c"]), "x": pa.array([1.0, 2.0, 3.0, 4.0])})
    expr, udf, expected, specs, schema = _keys_three_ways(
        spark, tmp_path, table, [("hilbert", ("s",), None), ("zorder", ("x",), 40)])
    assert not curve_keys.expressible(specs[0], schema)
    assert not curve_keys.expressible(specs[1], schema)  # 40 bits: scaled ranks overflow a long
    assert expr.tolist() == udf.tolist() == expected.tolist()


def test_an_unknown_key_function_is_refused(spark, tmp_path):
    with pytest.raises(InvalidParameterError, match="key_function"):
        fitting.with_key(None, [], TableSchema(()), "long", key_function="jit")


def test_the_expression_path_runs_no_python(spark, tmp_path):
    """The plan of the expression path holds no Python evaluation (no ArrowEvalPython)."""
    table = pa.table({"row": pa.array(range(6), pa.int64()), "g": pa.array([0] * 6, pa.int32()),
                      "x": pa.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.0]),
                      "d": pa.array([EPOCH] * 6, pa.date32()),
                      "m": pa.array([decimal.Decimal("1.25")] * 6, pa.decimal128(5, 2))})
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    df = spark.read.parquet(str(path)).withColumn(GROUP_COLUMN, __import__(
        "pyspark.sql.functions", fromlist=["col"]).col("g"))
    schema = TableSchema(tuple((f.name, _ltype(f.type)) for f in table.schema))
    spec = GroupSpec(0, PlanGroup((), "hilbert", ("x", "d")), [], 6, 0)
    fitting.fit_group(spec, df.toArrow(), schema, 1000)
    for how, python in (("expression", False), ("udf", True)):
        plan = fitting.with_key(df, [spec], schema, "long", key_function=how) \
            ._jdf.queryExecution().executedPlan().toString()
        assert ("ArrowEvalPython" in plan) == python, plan
