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
from engine.layout.base import RankCodec, ordering_from_json
from engine.layout.hilbert import hilbert_encode
from engine.policy.base import PlanGroup
from engine.spark import curve_keys, fitting
from engine.spark.jobspec import GROUP_COLUMN, KEY_COLUMN, GroupSpec
from engine.spark.options import ExecutorOptions
from engine.spark.reading import spark_schema_of
from engine.table.model import TableSchema

pytestmark = pytest.mark.spark

EPOCH = dt.date(1970, 1, 1)


def _ltype(t: pa.DataType) -> str:
    return logical_types.logical_type_of_arrow(t)


def _keys_three_ways(spark, tmp_path, table: pa.Table, groups, sample_mask=None,
                     options: ExecutorOptions = ExecutorOptions()):
    """Keys of every row by the expressions, the UDF and numpy (the fitted ordering's
    ``keys`` on the encoded rows). ``table`` has an int column "g" (the row's group);
    ``groups``: [(layout, columns, bits)] for groups 0, 1, ...; each ordering is fitted on
    the rows where ``sample_mask`` (default all) holds, through Spark as the executor does;
    the expressions computed as ``options`` says."""
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
        keyed = fitting.with_key(df, specs, schema, "long", key_function=how, options=options)
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
    """The plan of the expression path holds no Python evaluation (no ArrowEvalPython);
    "auto" neither over integral columns, and takes the UDF over a float."""
    table = pa.table({"row": pa.array(range(6), pa.int64()), "g": pa.array([0] * 6, pa.int32()),
                      "x": pa.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.0]),
                      "i": pa.array([3, 1, 2, 5, 4, 0], pa.int64()),
                      "d": pa.array([EPOCH] * 6, pa.date32()),
                      "m": pa.array([decimal.Decimal("1.25")] * 6, pa.decimal128(5, 2))})
    path = tmp_path / "x.parquet"
    pq.write_table(table, path)
    df = spark.read.parquet(str(path)).withColumn(GROUP_COLUMN, __import__(
        "pyspark.sql.functions", fromlist=["col"]).col("g"))
    schema = TableSchema(tuple((f.name, _ltype(f.type)) for f in table.schema))
    spec = GroupSpec(0, PlanGroup((), "hilbert", ("x", "d")), [], 6, 0)
    dates = GroupSpec(0, PlanGroup((), "hilbert", ("i", "d")), [], 6, 0)  # integral: "auto"
    for s in (spec, dates):
        fitting.fit_group(s, df.toArrow(), schema, 1000)
    large = ExecutorOptions(auto_min_rows=6)  # "auto" as for a large plan
    for s, how, python in ((spec, "expression", False), (spec, "udf", True),
                           (spec, "auto", True), (dates, "auto", False)):
        plan = fitting.with_key(df, [s], schema, "long", key_function=how, options=large) \
            ._jdf.queryExecution().executedPlan().toString()
        assert ("ArrowEvalPython" in plan) == python, plan


# ---- rank lookup tables and the table-driven 2-D Hilbert ----------------------

def _table_hilbert(points: np.ndarray, bits: int, chunk: int) -> np.ndarray:
    """The state machine of :func:`curve_keys.hilbert_table` run in numpy, as
    ``curve_keys._hilbert_2d`` runs it in Spark (padding included)."""
    table = np.asarray(curve_keys.hilbert_table(chunk), dtype=np.int64)
    steps = -(-bits // chunk)
    x, y = points[:, 0].astype(np.int64), points[:, 1].astype(np.int64)
    state = np.full(len(x), (steps * chunk - bits) % 2, dtype=np.int64)
    key = np.zeros(len(x), dtype=np.int64)
    mask = (1 << chunk) - 1
    for j in range(steps):
        shift = (steps - 1 - j) * chunk
        entry = table[state << 2 * chunk | ((x >> shift) & mask) << chunk | ((y >> shift) & mask)]
        key = key << 2 * chunk | (entry & ((1 << 2 * chunk) - 1))
        state = entry >> 2 * chunk
    return key


@pytest.mark.parametrize("chunk", [1, 2, 3, 4])
def test_the_hilbert_table_is_skillings_curve_at_every_width(chunk):
    """The chunked state machine gives Skilling's keys (engine/layout/hilbert.py) at 1 to
    31 bits: every cell of the small grids, 2,000 random cells of the others."""
    rng = np.random.default_rng(chunk)
    for bits in range(1, 32):
        if bits <= 4:
            side = np.arange(1 << bits)
            points = np.stack(np.meshgrid(side, side, indexing="ij"), -1).reshape(-1, 2)
        else:
            points = rng.integers(0, 1 << bits, size=(2000, 2))
        want = hilbert_encode(points.astype(np.uint64), bits).astype(np.int64)
        assert _table_hilbert(points, bits, chunk).tolist() == want.tolist(), bits


def test_the_hilbert_table_by_hand():
    """One bit a step from state 0: (0,0) (0,1) (1,1) (1,0) are digits 0 1 2 3; in the
    lower-left quadrant the curve is transposed (state 1), in the lower-right also
    complemented (state 3), elsewhere unchanged."""
    table = curve_keys.hilbert_table(1)
    cells = {(0, 0): 0, (0, 1): 1, (1, 0): 2, (1, 1): 3}  # cell index x << 1 | y
    assert [table[cells[c]] & 3 for c in [(0, 0), (0, 1), (1, 1), (1, 0)]] == [0, 1, 2, 3]
    assert [table[cells[c]] >> 2 for c in [(0, 0), (0, 1), (1, 1), (1, 0)]] == [1, 0, 0, 3]


def test_rank_tables_equal_the_codec_below_inside_and_above():
    rng = np.random.default_rng(3)
    for bits in (1, 5, 16):
        b = np.unique(rng.integers(-300, 300, size=rng.integers(1, 60))).astype(float)
        lo, table, top = curve_keys.rank_table(b.tolist(), bits)
        codec = RankCodec(b, False)
        values = np.arange(-400, 400, dtype=float)
        want = codec.scaled(values, bits).astype(np.int64)
        got = [0 if v < lo else top if v > lo + len(table) - 1 else table[int(v) - lo]
               for v in values]
        assert got == want.tolist()
        assert top == int(codec.scaled(np.array([np.nan]), bits)[0])
    assert curve_keys.rank_table([], 16) == (0, [], 0)


def test_which_columns_get_a_lookup_table():
    span = curve_keys.LOOKUP_SPAN
    assert curve_keys.lookup_fits({"date"}, [[0.0, 3000.0]])
    assert curve_keys.lookup_fits({"int", "bool"}, [[-5.0, 5.0], [0.0, 1.0], []])
    assert not curve_keys.lookup_fits({"date"}, [[0.0, float(span)]])  # span + 1 values
    assert not curve_keys.lookup_fits({"date", "float"}, [[0.0, 1.0]])
    assert not curve_keys.lookup_fits({"timestamp"}, [[0.0, 1.0]])
    assert curve_keys.lookup_fits({"int"}, [[0.0, span - 1.0]] * 5)  # a chain: end to end


def _date_table(n: int, seed: int) -> pa.Table:
    """Two date columns like TPC-H's ship and commit dates, an int column of small range,
    a float column, NULLs, and rows outside the fitted range (fit on the first half)."""
    rng = np.random.default_rng(seed)
    ship = rng.integers(8000, 10600, n)
    commit = ship + rng.integers(-90, 90, n)
    ship[n // 2:n // 2 + 20] = rng.integers(5000, 20000, 20)  # beyond the fitted boundaries
    days = [None if i % 97 == 0 else EPOCH + dt.timedelta(days=int(v)) for i, v in enumerate(ship)]
    return pa.table({
        "row": pa.array(range(n), pa.int64()),
        "g": pa.array(rng.integers(0, 3, n), pa.int32()),
        "ship": pa.array(days, pa.date32()),
        "commit": pa.array([EPOCH + dt.timedelta(days=int(v)) for v in commit], pa.date32()),
        "qty": pa.array([None if i % 89 == 0 else int(v) for i, v in
                         enumerate(rng.integers(-50, 5000, n))], pa.int64()),
        "price": pa.array(rng.normal(0, 1e3, n).round(2), pa.float64())})


def test_sixteen_bit_hilbert_over_dates_by_tables_equals_the_udf_and_numpy(spark, tmp_path):
    """The executor's case at the default 16 bits: a 2-D Hilbert over two dates, another
    over a date and an int and a Z-order over the same, three groups in two chains; every
    rank from a lookup table (a generated binary search would take minutes to compile)."""
    n = 3000
    table = _date_table(n, 11)
    groups = [("hilbert", ("ship", "commit"), None), ("hilbert", ("qty", "ship"), None),
              ("zorder", ("commit", "qty"), None)]
    expr, udf, expected, specs, schema = _keys_three_ways(
        spark, tmp_path, table, groups, [i < n // 2 for i in range(n)])
    assert all(s.ordering_json["state"]["bits"] == 16 for s in specs)
    for s in specs:
        b = [c["boundaries"] for c in s.ordering_json["state"]["codecs"]]
        types = {schema.type_of(c) for c in s.group.columns}
        assert curve_keys.lookup_fits(types, b)
        assert min(len(x) for x in b) > 100  # a real table, not a handful of cells
    assert len(set(expected.tolist())) > n // 2
    assert udf.tolist() == expected.tolist()
    assert expr.tolist() == expected.tolist()


def test_tables_and_binary_search_mixed_in_one_chain(spark, tmp_path):
    """A date (table) beside a float (binary search) in one 2-D Hilbert at 6 bits, and the
    same keys with the tables and the chunked curve switched off (the general chain)."""
    n = 800
    table = _date_table(n, 12)
    groups = [("hilbert", ("ship", "price"), 6), ("hilbert", ("commit", "price"), 6)]
    expr, udf, expected, _, _ = _keys_three_ways(spark, tmp_path, table, groups)
    assert expr.tolist() == udf.tolist() == expected.tolist()
    general = ExecutorOptions(ranks="search", hilbert_2d="skilling")
    old, _, _, _, _ = _keys_three_ways(spark, tmp_path, table, groups, options=general)
    assert old.tolist() == expected.tolist()


def _fitted_spec(layout: str, columns: dict[str, np.ndarray], index: int = 0,
                 rows: int = 1_000_000) -> GroupSpec:
    from engine.layout.base import make_ordering

    spec = GroupSpec(index, PlanGroup((), layout, tuple(columns)), [], rows, 0)
    spec.ordering_json = make_ordering(layout, list(columns)).fit(columns).to_json()
    return spec


def test_auto_takes_the_expressions_only_where_they_are_cheap():
    """"auto" (the default): expressions for 2-D Hilbert and Z-order curves over integral
    columns of narrow range, in plans of 300k rows or more; the UDF for floats, timestamps,
    wide ints (their bucket tables are exact but slower than the UDF), 3-D Hilbert and any
    plan with one such group (one key column for the plan); "expression" still takes every
    numeric curve, "udf" none."""
    schema = TableSchema((("d1", "date"), ("d2", "date"), ("d3", "date"), ("f", "float"),
                          ("t", "timestamp"), ("wide", "int"), ("s", "string")))
    rng = np.random.default_rng(5)
    days = {c: rng.integers(8000, 11000, 500).astype(float) for c in ("d1", "d2", "d3")}
    other = {"f": rng.normal(size=500), "t": rng.integers(0, 10 ** 15, 500).astype(float),
             "wide": rng.integers(0, 10 ** 9, 500).astype(float)}
    dates2 = _fitted_spec("hilbert", {"d1": days["d1"], "d2": days["d2"]})
    dates3 = _fitted_spec("hilbert", days)
    zorder3 = _fitted_spec("zorder", days)
    assert ExecutorOptions().key_function == "auto"
    assert curve_keys.chosen([dates2], schema, "auto") == "expression"
    assert curve_keys.chosen([dates2, zorder3], schema, "auto") == "expression"
    assert curve_keys.chosen([dates3], schema, "auto") == "udf"
    for c in other:  # bucket tables are exact but slower than the UDF
        spec = _fitted_spec("hilbert", {"d1": days["d1"], c: other[c]}, 1)
        assert curve_keys.chosen([spec], schema, "auto") == "udf", c
        assert curve_keys.chosen([dates2, spec], schema, "auto") == "udf", c
        assert curve_keys.chosen([spec], schema, "expression") == "expression", c
    assert curve_keys.chosen([dates2], schema, "udf") == "udf"
    # small plans: the UDF (the expressions' plan costs more to build than the rows save)
    small = [_fitted_spec("hilbert", {"d1": days["d1"], "d2": days["d2"]}, i, rows=100_000)
             for i in range(2)]
    assert ExecutorOptions().auto_min_rows == 300_000
    assert curve_keys.chosen(small, schema, "auto") == "udf"
    assert curve_keys.chosen(small * 2, schema, "auto") == "expression"  # 400k rows in all
    assert curve_keys.chosen(small, schema, "expression") == "expression"


def test_long_tables_built_in_the_jvm_hold_the_values(spark):
    values = [0, -1, 5, 1 << 62, -(1 << 63), (1 << 63) - 1] + list(range(2000))
    got = spark.range(1).select(curve_keys.long_table(values).alias("t")).collect()[0]["t"]
    assert got == values
    assert spark.range(1).select(curve_keys.long_table([]).alias("t")).collect()[0]["t"] == []


def _bucketed_ranks(boundaries: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The rank :func:`curve_keys._rank_bucketed` computes, step for step in numpy."""
    lo, scale, starts = curve_keys.bucket_table(boundaries)
    out = []
    for v in x:
        if np.isnan(v) or v > boundaries[-1]:
            out.append(len(boundaries))
        elif v < lo:
            out.append(0)
        else:
            k = int(min(np.floor((v - lo) * scale), curve_keys.BUCKETS))
            inside = boundaries[starts[k]:starts[k + 1]]
            out.append(starts[k] + int(np.sum(inside <= v)))
    return np.array(out, dtype=np.int64)


def test_bucketed_ranks_equal_searchsorted_at_and_between_boundaries():
    """Exact, not approximate: at every boundary, a hair on either side of it, below,
    above and NaN, the bucketed rank equals numpy's searchsorted (the codec's rank) for
    timestamps in microseconds, floats and wide ints."""
    rng = np.random.default_rng(9)
    cases = {"timestamp": np.unique(rng.integers(0, 10 ** 15, 3000)).astype(float),
             "float": np.unique(rng.normal(0, 1e3, 3000)),
             "int": np.unique(rng.integers(-10 ** 12, 10 ** 12, 3000)).astype(float)}
    for name, b in cases.items():
        assert curve_keys.bucket_fits([b]), name
        assert not curve_keys.lookup_fits({name}, [b]), name
        x = np.concatenate([b, np.nextafter(b, np.inf), np.nextafter(b, -np.inf),
                            [b[0] - 1, b[-1] + 1, np.nan], rng.uniform(b[0], b[-1], 3000)])
        want = np.searchsorted(b, x, side="right")
        assert _bucketed_ranks(b, x).tolist() == want.tolist(), name
    # crowded buckets (everything near 0 and one far outlier) or an overflowing span: no
    assert not curve_keys.bucket_fits([np.concatenate([np.linspace(0, 1, 50), [1e12]])])
    assert not curve_keys.bucket_fits([np.array([-1e308, 1e308])])
    assert not curve_keys.bucket_fits([np.array([])])


def test_sixteen_bit_curves_over_timestamps_floats_and_wide_ints_by_buckets(spark, tmp_path):
    """The default 16 bits over a timestamp (skewed to recent years), a float and a wide
    int: every rank from a bucket table (the "expression" path; "auto" keeps the UDF), row
    for row equal to the UDF and numpy, with NULLs and values beyond the fitted boundaries."""
    n = 3000
    rng = np.random.default_rng(21)
    micros = (1.7e15 - rng.exponential(3e13, n)).astype(np.int64)
    micros[n // 2:n // 2 + 15] = 1.8e15  # beyond the boundaries (fitted on the first half)
    stamps = [None if i % 83 == 0 else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(v))
              for i, v in enumerate(micros)]
    table = pa.table({
        "row": pa.array(range(n), pa.int64()),
        "g": pa.array(rng.integers(0, 3, n), pa.int32()),
        "t": pa.array(stamps, pa.timestamp("us")),
        "tz": pa.array(stamps, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        "price": pa.array([None if i % 71 == 0 else float(v) for i, v in
                           enumerate(rng.normal(0, 1e3, n).round(2))], pa.float64()),
        "wide": pa.array(rng.integers(-10 ** 12, 10 ** 12, n), pa.int64())})
    groups = [("hilbert", ("t", "price"), None), ("zorder", ("wide", "tz"), None),
              ("hilbert", ("wide", "price"), None)]
    expr, udf, expected, specs, schema = _keys_three_ways(
        spark, tmp_path, table, groups, [i < n // 2 for i in range(n)])
    for s in specs:
        b = [c["boundaries"] for c in s.ordering_json["state"]["codecs"]]
        assert curve_keys.bucket_fits(b) and min(len(x) for x in b) > 100
        assert not curve_keys.cheap(s, schema)
    assert len(set(expected.tolist())) > n // 2
    assert udf.tolist() == expected.tolist()
    assert expr.tolist() == expected.tolist()
