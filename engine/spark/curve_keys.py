"""Hilbert and Z-order keys as native Spark expressions, equal to the fitted ordering's.

Round 6's executor computed every fitted key in ONE scalar Arrow UDF
(:func:`engine.spark.fitting.with_key`): each row crossed into a Python worker and back,
which kept a one-group Hilbert rewrite at 1.79x a bare ``orderBy`` (issue 11, section 1,
goal 1.5x). A grid ordering's key (:class:`engine.layout.base.GridOrdering`) is plain
arithmetic on the fitted state, so this module writes it as Column expressions that
whole-stage code generation compiles:

1. each key column's encoded value (:mod:`engine.core.logical_types`: a double; dates in
   days, timestamps in microseconds, NULL as NaN);
2. its rank among the fitted boundaries, ``searchsorted(boundaries, x, side="right")``
   (:class:`~engine.layout.base.RankCodec`), by a branch-free binary search over a literal
   array (one step per bit of the boundary count), then stretched over ``2**bits`` cells;
3. the curve: bit interleaving (Z-order, :func:`engine.layout.zorder.interleave_bits`) or
   Skilling's transform then interleaving (Hilbert, :func:`engine.layout.hilbert.hilbert_encode`,
   J. Skilling, AIP Conf. Proc. 707, 2004), step for step as the numpy code does it.

Every step that reads a value twice is its own projection (a column of a staged
``withColumns``): Spark does not collapse projections whose non-trivial expressions are
used twice, so the expression stays linear in the steps instead of doubling at each one.
Groups with the same curve, column count and bits share one chain: their boundaries lie in
one literal array, each group's slice found by its offset (an O(1) lookup by group id).

The written order is the UDF's: both compute the same integer for every row
(``tests/test_curve_keys.py`` checks expression = UDF = numpy on random data with nulls,
ties, negative numbers, dates and timestamps, at 1 to 5 bits). String and decimal
columns, and a one-column curve of more than 31 bits, stay on the UDF (:func:`expressible`).

**Not the default** (:data:`KEY_FUNCTION`): at 16 bits the chain is about 70 projections
and Spark runs it far slower than the UDF (round 7, bench/README_executor.md). What would
make it pay: fewer stages (a JVM binary search for the ranks, e.g. ML's ``Bucketizer``; a
parallel-prefix 2-D Hilbert in O(log bits) steps), not tried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from engine.spark.hashing import long_array
from engine.spark.jobspec import GROUP_COLUMN, KEY_COLUMN, GroupSpec, q

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from engine.table.model import TableSchema

#: how the executor computes Hilbert and Z-order keys: "udf" (the scalar Arrow UDF of
#: :mod:`engine.spark.fitting`, round 6's way, and the path for key types the expressions do
#: not cover) or "expression" (this module). The default stays "udf": measured at 1M rows
#: (bench/README_executor.md, round 7) the staged expressions cost 36.9 s of executor CPU
#: against the UDF's 5.5 s (about 70 chained projections for 16 bits: the binary search's
#: steps and Skilling's, which Spark does not compile into one tight loop)
KEY_FUNCTION = "udf"
KEY_FUNCTIONS = ("expression", "udf")
#: layouts whose key is a grid curve over ranked columns
CURVES = ("hilbert", "zorder")
#: logical types whose encoding is a double computed by Spark exactly as by pyarrow. Not
#: decimals: Spark's cast to double and pyarrow's can differ in the last bit (found by the
#: property test: 28958385.7843 as decimal(14, 4) ranked 0 by Spark, 1 by numpy)
NUMERIC_KEYS = ("int", "float", "bool", "date", "timestamp")
_TMP = "__la_ck"  # prefix of the staged helper columns (dropped at the end)


def expressible(spec: GroupSpec, schema: "TableSchema") -> bool:
    """Can this fitted group's key be a Spark expression? A Hilbert or Z-order group over
    non-string columns whose scaled ranks fit a long (``2 * bits <= 62``)."""
    if spec.group.layout not in CURVES or spec.ordering_json is None:
        return False
    state = spec.ordering_json.get("state") or {}
    cols = spec.ordering_json.get("columns") or []
    if not state or any(schema.type_of(c) not in NUMERIC_KEYS for c in cols):
        return False
    return 2 * int(state["bits"]) <= 62


def encoded(column: str, ltype: str, spark_type: str) -> "Column":
    """The column's encoded value as :func:`engine.core.logical_types.encode_arrow` gives
    it (a double, NULL as NaN): dates in days and timestamps in microseconds since the
    epoch; a timestamp without time zone from its wall-clock fields (no session zone)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    c = F.col(q(column))
    if ltype == "date":
        value = F.unix_date(c.cast("date")).cast("double")
    elif ltype == "timestamp" and spark_type == "timestamp_ntz":
        micros = (F.unix_date(c.cast("date")).cast("long") * 86_400_000_000
                  + F.hour(c).cast("long") * 3_600_000_000
                  + F.minute(c).cast("long") * 60_000_000
                  + (F.expr(f"date_part('SECOND', {q(column)})") * 1_000_000).cast("long"))
        value = micros.cast("double")
    elif ltype == "timestamp":
        value = F.unix_micros(c).cast("double")
    else:
        value = c.cast("double")
    return F.coalesce(value, F.lit(float("nan")))


def double_array(values: Sequence[float]) -> "Column":
    """A literal ``array<double>`` of exactly these values (shortest round-trip decimal
    text, parsed by the JVM to the same doubles), as ONE expression, constant-folded."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    if not len(values):
        return F.expr("CAST(array() AS array<double>)")
    return F.expr("array(" + ",".join(f"{float(v)!r}D" for v in values) + ")")


def with_curve_keys(df: "DataFrame", specs: Sequence[GroupSpec],
                    schema: "TableSchema") -> "DataFrame":
    """``df`` with :data:`KEY_COLUMN`: each expressible group's curve key (:func:`expressible`;
    the caller sends the others to the UDF), 0 for every other row."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    chains: dict[tuple[str, int, int], list[GroupSpec]] = {}
    for s in specs:
        if expressible(s, schema):
            state = s.ordering_json["state"]
            chains.setdefault((s.group.layout, len(state["codecs"]), int(state["bits"])),
                              []).append(s)
    spark_types = {f.name: f.dataType.typeName() for f in df.schema.fields}
    key = None
    for n, ((kind, d, bits), members) in enumerate(chains.items()):
        df, value = _chain(df, f"{_TMP}{n}", kind, d, bits, members, spark_types, schema)
        cond = F.col(GROUP_COLUMN).isin([s.index for s in members])
        key = F.when(cond, value) if key is None else key.when(cond, value)
    key = F.lit(0).cast("long") if key is None else key.otherwise(F.lit(0).cast("long"))
    df = df.withColumn(KEY_COLUMN, key)
    return df.drop(*[c for c in df.columns if c.startswith(_TMP)])


def _chain(df: "DataFrame", tmp: str, kind: str, d: int, bits: int,
           members: Sequence[GroupSpec], spark_types: Mapping[str, str],
           schema: "TableSchema") -> tuple["DataFrame", "Column"]:
    """Staged columns computing one (curve, d, bits) chain's key for its groups; returns
    the frame and the key's expression (valid on the chain's groups' rows)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    g = F.col(GROUP_COLUMN)
    xs = [f"{tmp}_x{i}" for i in range(d)]
    inputs = {}
    for i in range(d):  # each dimension's encoded value: the row's group's i-th column
        value = None
        for s in members:
            col = s.ordering_json["columns"][i]
            enc = encoded(col, schema.type_of(col), spark_types.get(col, ""))
            value = enc if len(members) == 1 else (
                F.when(g == s.index, enc) if value is None else value.when(g == s.index, enc))
        inputs[xs[i]] = value
    df = df.withColumns(inputs)
    for i in range(d):
        df = _rank_scaled(df, xs[i], f"{tmp}_lo{i}", bits,
                          [(s.index, s.ordering_json["state"]["codecs"][i]["boundaries"])
                           for s in members])
    if kind == "hilbert":
        df = _skilling(df, xs, bits)
    return df, _interleave([F.col(x) for x in xs], bits)


def _lookup(values: Mapping[int, int]) -> "Column":
    """``values[group]`` of the row's group as a long (an O(1) literal-array lookup)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    if len(set(values.values())) == 1:
        return F.lit(next(iter(values.values()))).cast("long")
    table = long_array([values.get(i, 0) for i in range(max(values) + 1)])
    return F.try_element_at(table, (F.col(GROUP_COLUMN) + 1).cast("int"))


def _rank_scaled(df: "DataFrame", x: str, lo: str, bits: int,
                 groups: Sequence[tuple[int, Sequence[float]]]) -> "DataFrame":
    """Replace the encoded value ``x`` by its scaled rank, as :meth:`RankCodec.scaled`:
    ``(searchsorted(b, x, "right") << bits) // (len(b) + 1)``.

    The rank is found by a binary search that never branches on data: ``lo`` starts at 0
    and, for each power of two ``s`` from the largest not above the boundary count down to
    1, moves to ``lo + s`` when boundary ``lo + s`` (1-based) is ``<= x``. NaN (and NULL)
    rank after every boundary, as numpy sorts it (Spark orders NaN above every double)."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    offsets, counts, flat = {}, {}, []
    for gid, b in groups:
        offsets[gid], counts[gid] = len(flat), len(b)
        flat.extend(float(v) for v in b)
    off, n, tab = f"{lo}_off", f"{lo}_n", f"{lo}_b"
    df = df.withColumns({lo: F.lit(0).cast("long"), off: _lookup(offsets), n: _lookup(counts),
                         tab: double_array(flat)})  # the literal parsed once, not per step
    table, value = F.col(tab), F.col(x)
    most = max(counts.values())
    step = 1 << max(0, most.bit_length() - 1)
    while most and step >= 1:
        cand = F.col(lo) + step
        hit = (cand <= F.col(n)) & (F.try_element_at(table, (F.col(off) + cand).cast("int"))
                                    <= value)
        df = df.withColumn(lo, F.when(hit, cand).otherwise(F.col(lo)))
        step >>= 1
    return df.withColumn(x, F.expr(f"shiftleft(`{lo}`, {bits}) div (`{n}` + 1)")) \
        .drop(lo, off, n, tab)


def _skilling(df: "DataFrame", xs: Sequence[str], bits: int) -> "DataFrame":
    """Skilling's "axes to transpose" on the grid cells ``xs`` (in place), as
    :func:`engine.layout.hilbert._encode_block`: the inverse undo-excess-work steps from the
    top bit down, Gray encoding, then the XOR with ``t``."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    x = [F.col(c) for c in xs]
    d = len(xs)
    level = 1 << (bits - 1)
    while level > 1:
        p = level - 1
        for i in range(d):
            hit = (x[i].bitwiseAND(F.lit(level))) != 0
            if i == 0:
                df = df.withColumn(xs[0], F.when(hit, x[0].bitwiseXOR(F.lit(p))).otherwise(x[0]))
                continue
            t = F.when(hit, F.lit(0)).otherwise(x[0].bitwiseXOR(x[i]).bitwiseAND(F.lit(p)))
            df = df.withColumns({
                xs[0]: F.when(hit, x[0].bitwiseXOR(F.lit(p))).otherwise(x[0].bitwiseXOR(t)),
                xs[i]: x[i].bitwiseXOR(t)})
        level >>= 1
    for i in range(1, d):  # Gray encode
        df = df.withColumn(xs[i], x[i].bitwiseXOR(x[i - 1]))
    t = F.lit(0).cast("long")
    level = 1 << (bits - 1)
    while level > 1:
        t = t.bitwiseXOR(F.when(x[d - 1].bitwiseAND(F.lit(level)) != 0, F.lit(level - 1))
                         .otherwise(F.lit(0)))
        level >>= 1
    df = df.withColumn(f"{xs[0]}_t", t)
    return df.withColumns({c: F.col(c).bitwiseXOR(F.col(f"{xs[0]}_t")) for c in xs}) \
        .drop(f"{xs[0]}_t")


def _interleave(x: Sequence["Column"], bits: int) -> "Column":
    """The Morton code of the cells ``x`` (:func:`engine.layout.zorder.interleave_bits`):
    bit k of dimension i goes to bit ``k*d + (d-1-i)``; dimension 0 is the most significant."""
    from pyspark.sql import functions as F  # pyspark: costly import, deferred

    d = len(x)
    out = None
    for i in range(d):
        for k in range(bits):
            bit = F.shiftleft(F.shiftright(x[i], k).bitwiseAND(F.lit(1)), k * d + d - 1 - i)
            out = bit if out is None else out.bitwiseOR(bit)
    return out.cast("long")
